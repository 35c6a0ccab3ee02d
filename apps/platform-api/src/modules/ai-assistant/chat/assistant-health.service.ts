import { Injectable } from '@nestjs/common';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import type { AuthContext } from '../../../core/auth/auth-context.js';
import { AiProviderRegistry } from '../providers/ai-provider-registry.js';
import { ToolsService } from '../tools/tools.service.js';

/** How long a provider probe's answer is reused (health is polled; providers are not). */
const PROBE_TTL_MS = 30_000;
const PROBE_TIMEOUT_MS = 2_000;

export interface AssistantHealth {
  status: 'ok' | 'degraded';
  runtime: {
    defaultProvider: string;
    defaultModel: string;
    providers: { id: string; configured: boolean; isDefault: boolean; reachable: boolean | null }[];
  };
  toolProtocol: { protocol: 'mcp'; protocolVersion: string; status: 'ok' | 'error'; tools: number };
}

/**
 * GET /ai_assistant/health: can the runtime reach its providers, and does the tool protocol answer?
 * A configured provider is probed with an unauthenticated `GET {baseURL}/models` (any HTTP answer
 * means reachable; no key is sent), cached 30 s; the tools are listed through the MCP client, as
 * GET /ai_assistant/tools does. `ok` when the default provider is configured and reachable and MCP answers.
 */
@Injectable()
export class AssistantHealthService {
  private readonly probes = new Map<string, { at: number; reachable: Promise<boolean> }>();

  constructor(
    private readonly providers: AiProviderRegistry,
    private readonly mcp: ToolsService,
  ) {}

  async health(auth: AuthContext): Promise<AssistantHealth> {
    const defaults = this.providers.defaults;
    const [providers, toolProtocol] = await Promise.all([
      Promise.all(
        this.providers.list().map(async (p) => ({
          id: p.id,
          configured: p.configured,
          isDefault: p.id === defaults.providerId,
          reachable: p.configured ? await this.probe(p.defaultBaseUrl) : null,
        })),
      ),
      this.toolProtocol(auth),
    ]);
    const main = providers.find((p) => p.isDefault);
    const status = main?.configured && main.reachable && toolProtocol.status === 'ok' ? 'ok' : 'degraded';
    return { status, runtime: { defaultProvider: defaults.providerId, defaultModel: defaults.modelId, providers }, toolProtocol };
  }

  private async toolProtocol(auth: AuthContext): Promise<AssistantHealth['toolProtocol']> {
    const base = { protocol: 'mcp' as const, protocolVersion: LATEST_PROTOCOL_VERSION };
    try {
      return { ...base, status: 'ok', tools: (await this.mcp.list(auth)).tools.length };
    } catch {
      return { ...base, status: 'error', tools: 0 };
    }
  }

  private probe(baseUrl: string): Promise<boolean> {
    const cached = this.probes.get(baseUrl);
    if (cached && Date.now() - cached.at < PROBE_TTL_MS) return cached.reachable;
    const reachable = fetch(`${baseUrl}/models`, { method: 'GET', signal: AbortSignal.timeout(PROBE_TIMEOUT_MS), redirect: 'manual' })
      .then(async (res) => {
        await res.body?.cancel();
        return true;
      })
      .catch(() => false);
    this.probes.set(baseUrl, { at: Date.now(), reachable });
    return reachable;
  }
}
