import { lazy, Suspense, useEffect, useState, type ReactNode } from 'react'
import { Button } from 'react-aria-components'
import { Link, Redirect, Route, Switch, useLocation } from 'wouter'
import { useSession } from './session.tsx'
import { useI18n, LanguageSwitch } from './i18n.tsx'
import { ModeBanner, ModeSwitch } from './mode.tsx'
import { Forgot } from './pages/auth/forgot.tsx'
import { ResetPassword } from './pages/auth/reset-password.tsx'
import { SignIn } from './pages/auth/sign-in.tsx'
import { SignUp } from './pages/auth/sign-up.tsx'
import { VerifyEmailChange } from './pages/auth/verify-email-change.tsx'

// The signed-in pages load when first visited: the sign-in page's first load stays small.
const Overview = lazy(async () => await import('./pages/overview.tsx'))
const Verify = lazy(async () => await import('./pages/verify.tsx'))
const Lists = lazy(async () => await import('./pages/lists.tsx'))
const Jobs = lazy(async () => await import('./pages/jobs.tsx'))
const Keys = lazy(async () => await import('./pages/keys.tsx'))
const Webhooks = lazy(async () => await import('./pages/webhooks.tsx'))
const Billing = lazy(async () => await import('./pages/billing.tsx'))
const Account = lazy(async () => await import('./pages/account.tsx'))
const Notifications = lazy(async () => await import('./pages/notifications.tsx'))

const NAV = [
  ['/overview', 'nav.overview'],
  ['/verify', 'nav.verify'],
  ['/lists', 'nav.lists'],
  ['/jobs', 'nav.jobs'],
  ['/keys', 'nav.keys'],
  ['/webhooks', 'nav.webhooks'],
  ['/billing', 'nav.billing'],
  ['/notifications', 'nav.notifications'],
  ['/account', 'nav.account']
] as const

/** The signed-in layout: a skip link, the navigation (a menu button at narrow widths), the page. */
function Shell({ children }: { children: ReactNode }): ReactNode {
  const { t } = useI18n()
  const { signOut, profile } = useSession()
  const [location] = useLocation()
  const [open, setOpen] = useState(false)
  useEffect(() => {
    setOpen(false)
    document.getElementById('page-title')?.focus()
  }, [location])
  return (
    <div className="shell">
      <a className="skip" href="#main">
        {t('nav.skip')}
      </a>
      <header className="topbar">
        <Link className="brand" href="/overview">
          {t('app.name')}
        </Link>
        <Button
          className="react-aria-Button secondary nav-toggle"
          aria-expanded={open}
          aria-controls="sidebar"
          onPress={() => {
            setOpen(o => !o)
          }}
        >
          {t('nav.menu')}
        </Button>
      </header>
      <nav id="sidebar" className={`sidebar${open ? ' open' : ''}`} aria-label={t('nav.label')}>
        <Link className="brand" href="/overview">
          {t('app.name')}
        </Link>
        <ul className="nav">
          {NAV.map(([href, key]) => (
            <li key={href}>
              <Link href={href} aria-current={location === href || location.startsWith(`${href}/`) ? 'page' : undefined}>
                {t(key)}
              </Link>
            </li>
          ))}
          <li>
            <Button
              className="react-aria-Button link"
              onPress={() => {
                void signOut()
              }}
            >
              {t('nav.signout')}
            </Button>
          </li>
        </ul>
        <ModeSwitch />
        <p className="muted mono">{profile?.email}</p>
        <LanguageSwitch />
      </nav>
      <main id="main" className="main">
        <ModeBanner />
        <Suspense fallback={<p role="status">{t('app.loading')}</p>}>{children}</Suspense>
      </main>
    </div>
  )
}

/** The console's routes: the pages of a signed-out visitor, and the signed-in ones behind the shell. */
export function App(): ReactNode {
  const { status } = useSession()
  const { t } = useI18n()
  const [location] = useLocation()
  if (status === 'loading')
    return (
      <p className="center-page" role="status">
        {t('app.loading')}
      </p>
    )
  // Links mailed to the account work whether or not a session is open.
  if (location.startsWith('/reset-password')) return <ResetPassword />
  if (location.startsWith('/verify-email-change')) return <VerifyEmailChange />
  if (status === 'signed-out') {
    return (
      <Switch>
        <Route path="/signup">
          <SignUp />
        </Route>
        <Route path="/forgot">
          <Forgot />
        </Route>
        <Route path="/signin">
          <SignIn />
        </Route>
        <Route>
          <Redirect to="/signin" />
        </Route>
      </Switch>
    )
  }
  return (
    <Shell>
      <Switch>
        <Route path="/overview">
          <Overview />
        </Route>
        <Route path="/verify">
          <Verify />
        </Route>
        <Route path="/lists/:uuid?">{(p: { uuid?: string }) => <Lists uuid={p.uuid} />}</Route>
        <Route path="/jobs/:uuid?">{(p: { uuid?: string }) => <Jobs uuid={p.uuid} />}</Route>
        <Route path="/keys">
          <Keys />
        </Route>
        <Route path="/webhooks/:uuid?">{(p: { uuid?: string }) => <Webhooks uuid={p.uuid} />}</Route>
        <Route path="/billing/:outcome?">{(p: { outcome?: string }) => <Billing outcome={p.outcome} />}</Route>
        <Route path="/notifications">
          <Notifications />
        </Route>
        <Route path="/account">
          <Account />
        </Route>
        <Route>
          <Redirect to="/overview" />
        </Route>
      </Switch>
    </Shell>
  )
}
