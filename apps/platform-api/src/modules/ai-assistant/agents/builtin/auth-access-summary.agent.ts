import { Inject, Injectable } from '@nestjs/common';
import { z } from 'zod';
import { PLATFORM_CONFIG, type PlatformConfig } from '../../../../config/platform-config.js';
import { RolesService } from '../../../roles/roles.service.js';
import type { AgentDefinition, ToolCallContext } from '../agent-definition.js';

export const AUTH_ACCESS_SUMMARY_ID = 'auth.access_summary';

/** The object `run-object` answers for this agent (decisions.md): `{summary, roleCount}`. */
export const accessSummarySchema = z.object({ summary: z.string(), roleCount: z.number().int() }).strict();

/** Roles listed in the summary's context; beyond it the model is told the total only. */
const CONTEXT_ROLES = 100;

/**
 * `auth.access_summary`: an object-mode agent with no tools. Its context is the caller's roles (read
 * with the caller's access), and the model answers `{summary, roleCount}`, validated by run-object.
 */
@Injectable()
export class AuthAccessSummaryAgent {
  readonly definition: AgentDefinition;

  constructor(
    private readonly roles: RolesService,
    @Inject(PLATFORM_CONFIG) config: PlatformConfig,
  ) {
    this.definition = {
      id: AUTH_ACCESS_SUMMARY_ID,
      label: 'Access summary',
      description: 'Summarises the roles of your tenant as a JSON object {summary, roleCount}.',
      requiredFeatures: ['auth.roles.list'],
      executionMode: 'object',
      mutationPolicy: 'read-only',
      allowRuntimeOverride: true,
      // The deployment's defaults (AI_DEFAULT_PROVIDER / AI_DEFAULT_MODEL): a built-in agent has no preference of its own.
      defaultProvider: config.aiRuntime.defaultProvider,
      defaultModel: config.aiRuntime.defaultModel,
      acceptedMediaTypes: [],
      promptSections: {
        role: 'You summarise the access-control setup of a back-office tenant for an administrator.',
        output:
          'Answer with a JSON object {"summary": string, "roleCount": integer}; roleCount is the number of roles listed in the context.',
      },
      tools: [],
      objectSchema: accessSummarySchema,
      context: (context: ToolCallContext) => this.rolesContext(context),
    };
  }

  private async rolesContext({ auth }: ToolCallContext): Promise<string> {
    const page = await this.roles.list(auth, { pageSize: CONTEXT_ROLES });
    const names = page.items.map((role) => `- ${role.name} (${role.usersCount} users)`).join('\n');
    return `The tenant has ${page.total} roles${page.total > page.items.length ? `; the first ${page.items.length}` : ''}:\n${names}`;
  }
}
