/**
 * How far a time is from now, for an operator reading a table: the CLI's `feeds list` and the
 * operators' page show feeds' ages the same way.
 */
/** "2 min ago", "in 14 min", "3 h ago", "5 d ago", "never". */
export function age(iso: string | null, now: Date): string {
  if (iso === null) return 'never';
  const ms = Date.parse(iso) - now.getTime();
  const span = Math.abs(ms);
  const seconds = Math.round(span / 1000);
  let text: string;
  if (seconds < 60) text = `${seconds} s`;
  else if (seconds < 3600) text = `${Math.round(seconds / 60)} min`;
  else if (seconds < 48 * 3600) text = `${Math.round(seconds / 3600)} h`;
  else text = `${Math.round(seconds / 86400)} d`;
  if (seconds < 5) return 'now';
  return ms < 0 ? `${text} ago` : `in ${text}`;
}
