/** The HTML the public unsubscribe endpoint answers to people (browsers), as opposed to mail clients. */

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]);
}

/**
 * Headers of these pages: never cached (the URL is a capability), the token in the URL never sent on
 * as a Referer, no framing (no clickjacking of the button), nothing loaded, and the form may post
 * only back to this service.
 */
export const PAGE_HEADERS: Record<string, string> = {
  'Cache-Control': 'no-store',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
};

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 32rem; margin: 4rem auto; padding: 0 1rem; color: #222">
${body}
</body></html>
`;
}

/**
 * What `GET` answers: a question and a button, nothing changed yet. Link scanners and mail previews
 * fetch links without pressing buttons. The form posts to the same link (a path relative to it, so
 * it also works behind a proxy that mounts the service under a prefix).
 */
export function confirmationPage(token: string): string {
  return page(
    'Unsubscribe',
    `<h1 style="font-size: 1.5rem">Unsubscribe from these emails?</h1>
<p>You will no longer receive marketing emails from this sender. Transactional messages about your account may still arrive.</p>
<form method="post" action="${escapeHtml(encodeURIComponent(token))}">
<button type="submit" style="font-size: 1rem; padding: 0.5rem 1.25rem">Unsubscribe</button>
</form>`,
  );
}

/** What the form's `POST` answers. */
export const UNSUBSCRIBED_PAGE = page(
  'Unsubscribed',
  `<h1 style="font-size: 1.5rem">You have been unsubscribed</h1>
<p>You will no longer receive marketing emails from this sender. Transactional messages about your account may still arrive.</p>`,
);
