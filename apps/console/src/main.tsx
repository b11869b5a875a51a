import { lazy, Suspense, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { HashRouter, Navigate, Route, Routes } from 'react-router';
import { Layout } from './layout';
import { AgentsPage } from './pages/agents-page';
import { CallsPage } from './pages/calls-page';
import { CampaignsPage } from './pages/campaigns-page';
import { FirstRunPage } from './pages/first-run-page';
import { SignInPage } from './pages/sign-in-page';
import { WebhooksPage } from './pages/webhooks-page';
import { loadSession, saveSession, SessionContext, type Session } from './session';
import './styles.css';

// The call page carries the charting library: loaded when first opened, not with the sign-in page.
const CallPage = lazy(() => import('./pages/call-page').then((module) => ({ default: module.CallPage })));
// The agent page carries the diff library; the form library loads only when a form opens.
const AgentPage = lazy(() => import('./pages/agent-page').then((module) => ({ default: module.AgentPage })));
// The campaign page carries the charting library too; the form is loaded when first opened.
const CampaignPage = lazy(() => import('./pages/campaign-page').then((module) => ({ default: module.CampaignPage })));
const NewCampaignPage = lazy(() => import('./pages/new-campaign-page').then((module) => ({ default: module.NewCampaignPage })));
const UsagePage = lazy(() => import('./pages/usage-page').then((module) => ({ default: module.UsagePage })));

/**
 * Hash routes: the server serves one static index.html for `/`, and a first-run token in
 * `/#/first-run/<token>` never reaches a server log or a Referer header.
 */
function App() {
  const [session, setSessionState] = useState<Session | undefined>(loadSession);
  const setSession = (next: Session | undefined) => {
    saveSession(next);
    setSessionState(next);
  };
  return (
    <SessionContext.Provider value={{ session, setSession }}>
      <HashRouter>
        <Routes>
          <Route path="/first-run/:token" element={<FirstRunPage />} />
          <Route path="/sign-in" element={<SignInPage />} />
          <Route element={<Layout />}>
            <Route path="/agents" element={<AgentsPage />} />
            <Route
              path="/agents/:id"
              element={
                <Suspense fallback={<p className="empty">Loading…</p>}>
                  <AgentPage />
                </Suspense>
              }
            />
            <Route path="/calls" element={<CallsPage />} />
            <Route path="/campaigns" element={<CampaignsPage />} />
            <Route
              path="/campaigns/new"
              element={
                <Suspense fallback={<p className="empty">Loading…</p>}>
                  <NewCampaignPage />
                </Suspense>
              }
            />
            <Route
              path="/campaigns/:id"
              element={
                <Suspense fallback={<p className="empty">Loading…</p>}>
                  <CampaignPage />
                </Suspense>
              }
            />
            <Route path="/webhooks" element={<WebhooksPage />} />
            <Route
              path="/usage"
              element={
                <Suspense fallback={<p className="empty">Loading…</p>}>
                  <UsagePage />
                </Suspense>
              }
            />
            <Route
              path="/calls/:id"
              element={
                <Suspense fallback={<p className="empty">Loading…</p>}>
                  <CallPage />
                </Suspense>
              }
            />
          </Route>
          <Route path="*" element={<Navigate to={session ? '/agents' : '/sign-in'} replace />} />
        </Routes>
      </HashRouter>
    </SessionContext.Provider>
  );
}

createRoot(document.getElementById('root') as HTMLElement).render(<App />);
