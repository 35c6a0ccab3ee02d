/** Paths whose next segment is a credential (signed unsubscribe tokens): redacted wherever a URL is logged. */
export const SECRET_PATH_PREFIXES = ['/unsubscribe/'] as const;
