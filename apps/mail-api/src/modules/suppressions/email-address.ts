/** Characters RFC 5322 allows in a dot-atom local part besides letters and digits. */
const LOCAL_SPECIALS = new Set("!#$%&'*+-/=?^_`{|}~.");

function isAlnum(code: number): boolean {
  return (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
}

/**
 * A plain address `local@domain.tld` (dot-atom local part of at most 64 characters, a domain of
 * LDH labels with a letter-only TLD, at most 254 characters in all), checked in one pass with no
 * regular expression: the CSV import checks up to a million of them, and class-validator's isEmail
 * costs about 20 µs each (20 s a million on this machine). Quoted local parts, IP-literal and
 * internationalised domains are refused here (the single `POST /suppressions` accepts what isEmail does).
 */
export function isPlainEmailAddress(value: string): boolean {
  const length = value.length;
  if (length < 3 || length > 254) return false;
  const at = value.lastIndexOf('@');
  if (at < 1 || at > 64 || at === length - 1) return false;
  let previousDot = true; // no leading dot
  for (let i = 0; i < at; i++) {
    const code = value.charCodeAt(i);
    if (code === 46) {
      if (previousDot) return false;
      previousDot = true;
      continue;
    }
    previousDot = false;
    if (!isAlnum(code) && !LOCAL_SPECIALS.has(value[i])) return false;
  }
  if (previousDot) return false;
  let labelStart = at + 1;
  let labels = 0;
  let tldLettersOnly = true;
  for (let i = at + 1; i <= length; i++) {
    const code = i === length ? 46 : value.charCodeAt(i);
    if (code === 46) {
      const labelLength = i - labelStart;
      if (labelLength < 1 || labelLength > 63) return false;
      if (value.charCodeAt(labelStart) === 45 || value.charCodeAt(i - 1) === 45) return false;
      labels += 1;
      labelStart = i + 1;
      tldLettersOnly = true;
      continue;
    }
    if (code === 45) {
      tldLettersOnly = false;
      continue;
    }
    if (!isAlnum(code)) return false;
    if (code <= 57) tldLettersOnly = false;
  }
  // tldLettersOnly was reset at the final (virtual) dot: check the last label again.
  const tld = value.slice(value.lastIndexOf('.') + 1);
  for (let i = 0; i < tld.length; i++) if (!isAlnum(tld.charCodeAt(i)) || tld.charCodeAt(i) <= 57) return false;
  return labels >= 2 && tld.length >= 2 && tldLettersOnly;
}
