/**
 * A timestamptz column as the API's timestamp text, formatted by Postgres exactly as JavaScript's
 * `Date.prototype.toISOString` writes it (UTC, milliseconds truncated, `Z`). Selecting the text
 * skips pg's per-row Date parsing and the ISO formatting after it: on a page of 20 contacts the two
 * were a fifth of the API's CPU.
 */
export function isoTimestamp(column: string): string {
  return `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}
