import { ErrorAlert } from '../components/error-alert';
import { useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router';
import { api, messageOf, ApiError, type CurrentKey } from '../api';
import { useSession } from '../session';

/** Sign in with an API key (admin or read): the key is checked by asking the API who it is. */
export function SignInPage() {
  const { setSession } = useSession();
  const navigate = useNavigate();
  const [key, setKey] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const current = await api<CurrentKey>('/v1/api-keys/current', { key: key.trim() });
      setSession({ key: key.trim(), current });
      void navigate('/agents');
    } catch (caught) {
      setError(caught instanceof ApiError && caught.status === 401 ? 'That key is unknown or revoked.' : messageOf(caught));
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="centered">
      <form className="card" onSubmit={(event) => void submit(event)}>
        <h1>Sign in to Switchboard</h1>
        <label>
          API key
          <input name="apiKey" type="password" autoComplete="off" value={key} onChange={(event) => setKey(event.target.value)} placeholder="sk_live_…" required />
        </label>
        <ErrorAlert message={error} />
        <button type="submit" disabled={busy || key.trim() === ''}>
          Sign in
        </button>
        <p className="hint">First start? The server printed a one-time sign-in link in its log.</p>
      </form>
    </div>
  );
}
