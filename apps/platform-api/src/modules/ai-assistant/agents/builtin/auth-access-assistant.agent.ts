import { Inject, Injectable } from '@nestjs/common';
import { z } from 'zod';
import { ErrorCode } from '@app/contracts';
import { DomainError } from '@app/service-kit';
import { PLATFORM_CONFIG, type PlatformConfig } from '../../../../config/platform-config.js';
import { RolesService } from '../../../roles/roles.service.js';
import { type AgentDefinition, type MutationTool, type ReadTool, StaleVersionError, type ToolCallContext } from '../agent-definition.js';

export const AUTH_ACCESS_ASSISTANT_ID = 'auth.access_assistant';

const listRolesInput = z.object({ search: z.string().max(200).optional() }).strict();
const renameRoleInput = z.object({ roleId: z.uuid(), name: z.string().trim().min(1).max(100) }).strict();

type ListRolesInput = z.infer<typeof listRolesInput>;
type RenameRoleInput = z.infer<typeof renameRoleInput>;

/** How many roles one `auth.list_roles` call returns (the roles list's largest page). */
const LIST_ROLES_LIMIT = 100;

/**
 * `auth.access_assistant` (decisions.md "Built-in agents"): a chat agent over the caller's roles. It
 * reads them with the roles service (the caller's scope and access log), and renames one only through
 * a pending action the caller confirms; the rename then runs as the `auth.roles.update` command (an
 * action log entry, undoable) and only while the role's version is the one previewed.
 */
@Injectable()
export class AuthAccessAssistantAgent {
  readonly definition: AgentDefinition;

  constructor(
    private readonly roles: RolesService,
    @Inject(PLATFORM_CONFIG) config: PlatformConfig,
  ) {
    this.definition = {
      id: AUTH_ACCESS_ASSISTANT_ID,
      label: 'Access assistant',
      description: 'Answers questions about roles and renames a role after your confirmation.',
      requiredFeatures: ['auth.roles.list'],
      executionMode: 'chat',
      mutationPolicy: 'confirm-required',
      allowRuntimeOverride: true,
      // The deployment's defaults (AI_DEFAULT_PROVIDER / AI_DEFAULT_MODEL): a built-in agent has no preference of its own.
      defaultProvider: config.aiRuntime.defaultProvider,
      defaultModel: config.aiRuntime.defaultModel,
      acceptedMediaTypes: [],
      promptSections: {
        role: 'You are the access-control assistant of a back-office platform. You help administrators understand and tidy up their roles.',
        tools:
          'Use auth__list_roles to look roles up before answering; never invent role ids. To rename a role call auth__rename_role: ' +
          'the change is not applied until the user confirms it, so tell the user a confirmation is pending.',
        style: 'Answer briefly, in the language of the user.',
      },
      tools: [this.listRoles(), this.renameRole()],
    };
  }

  private listRoles(): ReadTool<ListRolesInput, { items: { id: string; name: string }[] }> {
    return {
      kind: 'read',
      name: 'auth.list_roles',
      description: 'Lists the roles visible to the user (their tenant and global roles), optionally filtered by a name substring.',
      inputSchema: listRolesInput,
      requiredFeatures: ['auth.roles.list'],
      run: async ({ auth }: ToolCallContext, input: ListRolesInput) => {
        const page = await this.roles.list(auth, { search: input.search, pageSize: LIST_ROLES_LIMIT });
        return { items: page.items.map((role) => ({ id: role.id, name: role.name })) };
      },
    };
  }

  private renameRole(): MutationTool<RenameRoleInput, { ok: true; roleId: string; name: string }> {
    return {
      kind: 'mutation',
      name: 'auth.rename_role',
      description: 'Renames a role (needs the user’s confirmation before it is applied).',
      inputSchema: renameRoleInput,
      requiredFeatures: ['auth.roles.manage'],
      destructive: false,
      preview: async ({ auth }: ToolCallContext, input: RenameRoleInput) => {
        const role = await this.roles.findVersioned(auth, input.roleId);
        return {
          targetEntityType: 'auth.role',
          targetRecordId: role.id,
          fieldDiff: { name: { from: role.name, to: input.name } },
          recordVersion: role.version,
        };
      },
      execute: async ({ auth }: ToolCallContext, input: RenameRoleInput, expectedVersion: number | null) => {
        try {
          if (expectedVersion === null) await this.roles.update(auth, { id: input.roleId, name: input.name });
          else await this.roles.renameAtVersion(auth, { id: input.roleId, name: input.name, expectedVersion });
        } catch (err) {
          if (err instanceof DomainError && err.code === ErrorCode.PreconditionFailed)
            throw new StaleVersionError('the role changed since the preview');
          throw err;
        }
        return { ok: true, roleId: input.roleId, name: input.name };
      },
    };
  }
}
