import { createContext, useContext } from 'react';
import type { CurrentKey } from './api';

/**
 * The signed-in key, kept in sessionStorage: it lives as long as the tab, is not shared with other
 * tabs or kept after the browser closes, and is never put in a URL.
 */
export interface Session {
  key: string;
  current: CurrentKey;
}

const STORAGE_KEY = 'switchboard.session';

export function loadSession(): Session | undefined {
  try {
    const stored = sessionStorage.getItem(STORAGE_KEY);
    return stored ? (JSON.parse(stored) as Session) : undefined;
  } catch {
    return undefined;
  }
}

export function saveSession(session: Session | undefined): void {
  if (session) sessionStorage.setItem(STORAGE_KEY, JSON.stringify(session));
  else sessionStorage.removeItem(STORAGE_KEY);
}

export function canWrite(session: Session): boolean {
  return session.current.scopes.includes('admin');
}

export const SessionContext = createContext<{ session: Session | undefined; setSession(session: Session | undefined): void }>({
  session: undefined,
  setSession: () => undefined,
});

export function useSession() {
  return useContext(SessionContext);
}
