import { Agent, fetch as undiciFetch } from 'undici';
import { guardedLookup, isNonPublicHost, NonPublicAddressError } from '@app/service-kit';

export type FetchFunction = typeof globalThis.fetch;

/** Headers that carry a provider key (OpenAI-compatible and Anthropic protocols). */
const CREDENTIAL_HEADERS = ['authorization', 'x-api-key'];

/**
 * How the platform talks to a base URL that is not the deployment's own (a tenant's settings or a
 * request's `baseUrl`): decisions.md "Provider endpoints and spend".
 * - `refusePrivate` (production without AI_BASEURL_ALLOW_PRIVATE): an IP literal that is not public is
 *   refused before connecting, and a name is resolved and checked in the socket's own lookup
 *   (service-kit `guardedLookup`), so DNS rebinding cannot slip a private address in.
 * - `keyless` (no key the tenant stored with that URL): no credential header leaves the process, even
 *   one an SDK filled in from its own environment variable.
 * - Redirects are errors: a provider API does not redirect, and a redirect to an IP literal would not
 *   pass through the lookup.
 */
export class ProviderEndpointFetch {
  private readonly guarded = new Agent({ connect: { lookup: guardedLookup } });

  fetchFor(options: { refusePrivate: boolean; keyless: boolean }): FetchFunction {
    const dispatcher = options.refusePrivate ? this.guarded : undefined;
    const fetchWith = (input: Parameters<FetchFunction>[0], init?: RequestInit): Promise<Response> => {
      const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
      if (options.refusePrivate && isNonPublicHost(url.hostname)) {
        return Promise.reject(new NonPublicAddressError(`refused: ${url.hostname} is a private or loopback address`));
      }
      // The SDK posts JSON: a string body. Anything else is not a provider call this fetch makes.
      if (init?.body != null && typeof init.body !== 'string') return Promise.reject(new TypeError('unsupported request body'));
      const headers = new Headers(init?.headers);
      if (options.keyless) for (const name of CREDENTIAL_HEADERS) headers.delete(name);
      const response = undiciFetch(url, {
        method: init?.method,
        headers: Object.fromEntries(headers),
        body: init?.body,
        signal: init?.signal,
        redirect: 'error',
        dispatcher,
      });
      return response;
    };
    return fetchWith;
  }

  close(): Promise<void> {
    return this.guarded.close();
  }
}
