import { Inject, Injectable } from '@nestjs/common';
import { isUUID } from 'class-validator';
import { DataSource } from 'typeorm';
import { ErrorCode, type FieldError, type MailList } from '@app/contracts';
import { DomainError } from '@app/service-kit';
import { MAIL_CONFIG, type MailConfig } from '../../config/mail-config.js';
import type { ProjectContext } from '../../core/auth/project-context.js';
import { decodeCursor, encodeCursor, takePage } from '../../core/http/pagination.js';
import { scopeOf, type ProjectScope } from '../../core/scope/project-scope.js';
import { newWebhookSecret, WebhookSecretCipher } from './webhook-secret-cipher.js';
import type { WorkflowStep } from './workflow-definition.js';
import { WorkflowExecutionsRepository } from './workflow-executions.repository.js';
import { validateWorkflowSteps } from './workflow-graph.js';
import { WorkflowStepsRepository } from './workflow-steps.repository.js';
import { WorkflowTriggerService } from './workflow-trigger.service.js';
import type { CreateWorkflowBody, ListWorkflowsQuery, MailWorkflow, MailWorkflowCreated, UpdateWorkflowBody } from './workflows.dto.js';
import { toWorkflow, WorkflowsRepository, type WorkflowFields, type WorkflowRow } from './workflows.repository.js';

export function validationError(problems: FieldError[]): DomainError {
  const first = problems[0];
  return new DomainError(ErrorCode.ValidationError, `validation failed: ${first.field} ${first.message}`, {
    status: 422,
    details: problems,
  });
}

export function workflowNotFound(): DomainError {
  return DomainError.notFound('workflow not found');
}

/**
 * Workflows of the calling project: CRUD with the steps validated as a graph (workflow-graph.ts) and
 * their templates checked against the project. Another project's workflow is a 404. Every change
 * tells the trigger hook of this process to read the project's event names again.
 */
@Injectable()
export class WorkflowsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly workflows: WorkflowsRepository,
    private readonly executions: WorkflowExecutionsRepository,
    private readonly steps: WorkflowStepsRepository,
    private readonly triggers: WorkflowTriggerService,
    private readonly secrets: WebhookSecretCipher,
    @Inject(MAIL_CONFIG) private readonly config: MailConfig,
  ) {}

  async list(project: ProjectContext, query: ListWorkflowsQuery): Promise<MailList<MailWorkflow>> {
    const { rows, total } = await this.workflows.list(this.dataSource, scopeOf(project), {
      limit: query.limit,
      beforeId: query.cursor ? decodeCursor(query.cursor) : undefined,
      enabled: query.enabled,
      eventName: query.eventName,
    });
    const { page, hasMore } = takePage(rows, query.limit);
    return { items: page.map(toWorkflow), nextCursor: hasMore ? encodeCursor(page[page.length - 1].id) : null, hasMore, total };
  }

  async create(project: ProjectContext, body: CreateWorkflowBody): Promise<MailWorkflowCreated> {
    const scope = scopeOf(project);
    const steps = await this.validSteps(scope, body.steps);
    const id = await this.workflows.newId(this.dataSource);
    const secret = newWebhookSecret();
    const fields: WorkflowFields = {
      name: body.name,
      description: body.description ?? null,
      eventName: body.eventName,
      enabled: body.enabled ?? false,
      allowReentry: body.allowReentry ?? false,
      steps,
    };
    const row = await this.workflows.insert(this.dataSource, scope, {
      id,
      fields,
      sealedSecret: this.secrets.seal(secret, { projectId: scope.projectId, workflowId: id }),
    });
    this.triggers.invalidate(scope.projectId);
    return { ...toWorkflow(row), webhookSecret: secret };
  }

  async get(project: ProjectContext, id: string): Promise<MailWorkflow> {
    return toWorkflow(await this.row(scopeOf(project), id));
  }

  /** Sets the fields present; `steps` replaces all steps and is validated as a whole. An empty body changes nothing. */
  async update(project: ProjectContext, id: string, body: UpdateWorkflowBody): Promise<MailWorkflow> {
    const scope = scopeOf(project);
    if (!isUUID(id)) throw workflowNotFound();
    const patch: Partial<WorkflowFields> = {};
    if (body.name !== undefined) patch.name = body.name;
    if (body.description !== undefined) patch.description = body.description;
    if (body.eventName !== undefined) patch.eventName = body.eventName;
    if (body.enabled !== undefined) patch.enabled = body.enabled;
    if (body.allowReentry !== undefined) patch.allowReentry = body.allowReentry;
    if (body.steps !== undefined) {
      await this.row(scope, id); // a 404 comes before the body's 422
      patch.steps = await this.validSteps(scope, body.steps);
    }
    if (Object.keys(patch).length === 0) return this.get(project, id);
    const row = await this.workflows.update(this.dataSource, scope, { id, patch });
    if (!row) throw workflowNotFound();
    this.triggers.invalidate(scope.projectId);
    return toWorkflow(row);
  }

  /** Cancels the running executions (their open steps first) and hides the workflow, in one transaction. */
  async remove(project: ProjectContext, id: string): Promise<void> {
    const scope = scopeOf(project);
    if (!isUUID(id)) throw workflowNotFound();
    const deleted = await this.dataSource.transaction(async (tx) => {
      if (!(await this.workflows.softDelete(tx, scope, id))) return false;
      await this.steps.cancelForWorkflow(tx, scope, id);
      await this.executions.cancelForWorkflow(tx, scope, id);
      return true;
    });
    if (!deleted) throw workflowNotFound();
    this.triggers.invalidate(scope.projectId);
  }

  /** The project's live workflow; 404 otherwise (another project's included). */
  async row(scope: ProjectScope, id: string): Promise<WorkflowRow> {
    const row = isUUID(id) ? await this.workflows.findById(this.dataSource, scope, id) : null;
    if (!row) throw workflowNotFound();
    return row;
  }

  private async validSteps(scope: ProjectScope, input: unknown): Promise<WorkflowStep[]> {
    const refusePrivateTargets = this.config.env === 'production' && !this.config.workflows.webhookAllowPrivate;
    const result = validateWorkflowSteps(input, { refusePrivateTargets });
    if ('errors' in result) throw validationError(result.errors);
    const sends = result.steps.flatMap((step, index) =>
      step.type === 'SEND_EMAIL' ? [{ index, templateId: step.config.templateId }] : [],
    );
    const existing = await this.workflows.existingTemplates(this.dataSource, scope, [...new Set(sends.map((s) => s.templateId))]);
    const missing = sends.filter((s) => !existing.has(s.templateId));
    if (missing.length > 0) {
      throw validationError(
        missing.map((s) => ({
          field: `steps[${s.index}].config.templateId`,
          message: 'templateId names no template of this project',
          code: 'templateNotFound',
        })),
      );
    }
    return result.steps;
  }
}
