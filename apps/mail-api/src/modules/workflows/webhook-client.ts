import { Inject, Injectable } from '@nestjs/common';
import { createHmac } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { guardedLookup, isNonPublicHost, NonPublicAddressError } from '@app/service-kit';
import { MAIL_CONFIG, type MailConfig } from '../../config/mail-config.js';
import type { WebhookMethod } from './workflow-definition.js';

/** What is read of a response: enough to be polite to the server, never a memory risk. */
const MAX_RESPONSE_BYTES = 64 * 1024;

export interface WebhookRequest {
  url: string;
  method: WebhookMethod;
  headers: Record<string, string>;
  /** The exact bytes sent and signed. */
  body: string;
  secret: string;
  /** `<executionId>.<stepId>.<visit>`: the same on every attempt, so a receiver can drop repeats. */
  deliveryId: string;
  attempt: number;
}

export type WebhookResult = { ok: true; status: number } | { ok: false; error: string; status?: number };

/** `sha256=<hex HMAC-SHA256 of the raw body keyed by the UTF-8 bytes of the secret>`. */
export function webhookSignature(body: string, secret: string): string {
  return `sha256=${createHmac('sha256', Buffer.from(secret, 'utf8')).update(body, 'utf8').digest('hex')}`;
}

/**
 * Sends one WEBHOOK request: JSON body signed with the workflow's secret, a hard timeout over the whole
 * exchange (MAIL_WEBHOOK_TIMEOUT_MS, 10 s by default), no redirects (a 3xx is a failed attempt), and,
 * when private targets are refused (production without MAIL_WEBHOOK_ALLOW_PRIVATE), every address the
 * host resolves to checked before connecting: the socket connects to an address that was checked, so a
 * name that resolves to a public address once and a private one later (DNS rebinding) cannot slip through.
 */
@Injectable()
export class WebhookClient {
  constructor(@Inject(MAIL_CONFIG) private readonly config: MailConfig) {}

  private get refusePrivate(): boolean {
    return this.config.env === 'production' && !this.config.workflows.webhookAllowPrivate;
  }

  async send(request: WebhookRequest): Promise<WebhookResult> {
    const url = new URL(request.url);
    if (this.refusePrivate) {
      if (isNonPublicHost(url.hostname)) {
        return { ok: false, error: `refused: ${url.hostname} is a private or loopback address` };
      }
    }
    try {
      const status = await this.exchange(url, request);
      if (status >= 200 && status < 300) return { ok: true, status };
      if (status >= 300 && status < 400) return { ok: false, status, error: `redirect (${status}) refused` };
      return { ok: false, status, error: `HTTP ${status}` };
    } catch (err) {
      const message = err instanceof NonPublicAddressError ? err.message : `request failed: ${(err as Error).message}`;
      return { ok: false, error: message };
    }
  }

  private exchange(url: URL, request: WebhookRequest): Promise<number> {
    const body = Buffer.from(request.body, 'utf8');
    const headers: Record<string, string> = {
      ...request.headers,
      'Content-Type': 'application/json',
      'Content-Length': String(body.length),
      'User-Agent': 'mail-api-webhooks/1',
      'X-Webhook-Signature': webhookSignature(request.body, request.secret),
      'X-Webhook-Id': request.deliveryId,
      'X-Webhook-Attempt': String(request.attempt),
    };
    const transport = url.protocol === 'https:' ? https : http;
    return new Promise<number>((resolve, reject) => {
      const req = transport.request(url, {
        method: request.method,
        headers,
        agent: false,
        lookup: this.refusePrivate ? guardedLookup : undefined,
        timeout: this.config.workflows.webhookTimeoutMs,
      });
      // `timeout` above is idle time; this bounds the whole exchange, a trickling server included.
      const deadline = setTimeout(
        () => req.destroy(new Error(`timed out after ${this.config.workflows.webhookTimeoutMs} ms`)),
        this.config.workflows.webhookTimeoutMs,
      );
      req.on('timeout', () => req.destroy(new Error(`timed out after ${this.config.workflows.webhookTimeoutMs} ms`)));
      req.on('error', (err) => {
        clearTimeout(deadline);
        reject(err);
      });
      req.on('response', (res) => {
        let read = 0;
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_RESPONSE_BYTES) res.destroy();
        });
        const done = () => {
          clearTimeout(deadline);
          resolve(res.statusCode ?? 0);
        };
        res.on('end', done);
        res.on('close', done);
        res.on('error', done);
      });
      req.end(body);
    });
  }
}
