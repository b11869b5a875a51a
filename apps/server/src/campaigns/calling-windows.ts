import { WEEKDAYS, type CallingWindows, type Weekday } from '@switchboard/persistence';

/*
 * Calling windows are local times in each contact's IANA time zone, read with Intl (the runtime's
 * own tz database, so daylight-saving changes need no date library and no table of ours): a contact
 * is called only while its own local weekday and time fall inside one of the campaign's windows.
 */

/** 'HH:MM' from 00:00 to 24:00 (24:00 only ends a window: "until midnight"). */
export const LOCAL_TIME_PATTERN = /^(?:[01]\d|2[0-3]):[0-5]\d$|^24:00$/;

/** Minutes after local midnight of 'HH:MM'. */
export function minutesOf(time: string): number {
  const [hours, minutes] = time.split(':').map(Number);
  return (hours ?? 0) * 60 + (minutes ?? 0);
}

/** Formatters are costly to build and a campaign's contacts share a few zones: kept per zone, bounded. */
const formatters = new Map<string, Intl.DateTimeFormat>();
const MAX_CACHED_FORMATTERS = 1_000;

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (formatter === undefined) {
    if (formatters.size >= MAX_CACHED_FORMATTERS) formatters.clear();
    formatter = new Intl.DateTimeFormat('en-US', { timeZone, weekday: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/** Whether Intl knows the zone (IANA names such as Europe/Paris, America/New_York, UTC). */
export function isKnownTimeZone(timeZone: string): boolean {
  if (timeZone.length === 0 || timeZone.length > 64) return false;
  try {
    formatterFor(timeZone);
    return true;
  } catch {
    return false;
  }
}

const WEEKDAY_BY_SHORT_NAME: Record<string, Weekday> = { Mon: 'mon', Tue: 'tue', Wed: 'wed', Thu: 'thu', Fri: 'fri', Sat: 'sat', Sun: 'sun' };

/** The weekday and the minutes after midnight that `instant` is in `timeZone`. */
export function localTimeIn(instant: Date, timeZone: string): { weekday: Weekday; minutes: number } {
  const parts = formatterFor(timeZone).formatToParts(instant);
  const part = (type: Intl.DateTimeFormatPartTypes) => parts.find((entry) => entry.type === type)?.value ?? '';
  const weekday = WEEKDAY_BY_SHORT_NAME[part('weekday')];
  if (weekday === undefined) throw new Error(`Intl gave no weekday for ${instant.toISOString()} in ${timeZone}`);
  return { weekday, minutes: Number(part('hour')) * 60 + Number(part('minute')) };
}

/** Whether a contact in `timeZone` may be called at `instant`. */
export function isWithinCallingWindows(windows: CallingWindows, instant: Date, timeZone: string): boolean {
  const local = localTimeIn(instant, timeZone);
  return (windows[local.weekday] ?? []).some((window) => local.minutes >= minutesOf(window.from) && local.minutes < minutesOf(window.to));
}

/** The zones, of those given, whose contacts may be called at `instant`. A zone Intl does not know is never open. */
export function openTimeZones(windows: CallingWindows, timeZones: readonly string[], instant: Date): string[] {
  return timeZones.filter((timeZone) => isKnownTimeZone(timeZone) && isWithinCallingWindows(windows, instant, timeZone));
}

/** Windows in weekday order (the API echoes them as given, but sorted and without empty days). */
export function normaliseWindows(windows: CallingWindows): CallingWindows {
  const result: CallingWindows = {};
  for (const day of WEEKDAYS) {
    const list = windows[day];
    if (list && list.length > 0) result[day] = [...list].sort((a, b) => minutesOf(a.from) - minutesOf(b.from));
  }
  return result;
}
