import { StrictMode } from 'react'
import { createRoot } from 'react-dom/client'
import { Router } from 'wouter'
import { QueryClientProvider } from '@tanstack/react-query'
import { queryClient } from './queries.ts'
import { I18nProvider } from './i18n.tsx'
import { SessionProvider } from './session.tsx'
import { ModeProvider } from './mode.tsx'
import { App } from './app.tsx'

// The console's entry: the reads' cache (queries.ts), languages, then the session (restored through the refresh cookie), the test-mode switch, then the routes.
createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <I18nProvider>
        <SessionProvider>
          <ModeProvider>
            <Router>
              <App />
            </Router>
          </ModeProvider>
        </SessionProvider>
      </I18nProvider>
    </QueryClientProvider>
  </StrictMode>
)
