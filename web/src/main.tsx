import { StrictMode } from 'react'
import { createRoot } from 'react-dom/client'
import { Router } from 'wouter'
import { I18nProvider } from './i18n.tsx'
import { SessionProvider } from './session.tsx'
import { App } from './app.tsx'

// The console's entry: languages, then the session (restored through the refresh cookie), then the routes.
createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <I18nProvider>
      <SessionProvider>
        <Router>
          <App />
        </Router>
      </SessionProvider>
    </I18nProvider>
  </StrictMode>
)
