import { Navigate, NavLink, Outlet, useNavigate } from 'react-router';
import { canWrite, useSession } from './session';

/** The signed-in frame: navigation, who is signed in with which scope, sign-out. */
export function Layout() {
  const { session, setSession } = useSession();
  const navigate = useNavigate();
  if (!session) return <Navigate to="/sign-in" replace />;
  return (
    <div className="frame">
      <header className="topbar">
        <span className="brand">
          <img src="/favicon.svg" alt="" />
          Switchboard
        </span>
        <nav>
          <NavLink to="/agents">Agents</NavLink>
          <NavLink to="/calls">Calls</NavLink>
          <NavLink to="/campaigns">Campaigns</NavLink>
          <NavLink to="/usage">Usage</NavLink>
          <NavLink to="/webhooks">Webhooks</NavLink>
        </nav>
        <span className="who" data-testid="signed-in-as">
          {session.current.name} ({session.current.prefix}…) <span className={canWrite(session) ? 'badge admin' : 'badge read'}>{canWrite(session) ? 'admin' : 'read only'}</span>
        </span>
        <button
          type="button"
          className="link"
          onClick={() => {
            setSession(undefined);
            void navigate('/sign-in');
          }}
        >
          Sign out
        </button>
      </header>
      <main>
        <Outlet />
      </main>
    </div>
  );
}
