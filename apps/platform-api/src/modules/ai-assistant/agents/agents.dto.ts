import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { MUTATION_POLICIES, type ExecutionMode, type MutationPolicy } from './agent-definition.js';

// ---- responses (OpenAPI) of /ai_assistant/ai/agents ---------------------------------------------

const EXECUTION_MODES: ExecutionMode[] = ['chat', 'object'];

export class AgentToolSummaryDto {
  @ApiProperty() name: string;
  @ApiProperty({ enum: ['read', 'mutation'] }) kind: 'read' | 'mutation';
  @ApiProperty() description: string;
  @ApiPropertyOptional({ description: 'Mutation tools only.' }) destructive?: boolean;
}

export class AgentSummaryDto {
  @ApiProperty({ description: '`module.agent`' }) id: string;
  @ApiProperty() label: string;
  @ApiProperty() description: string;
  @ApiProperty({ enum: EXECUTION_MODES }) executionMode: ExecutionMode;
  @ApiProperty({ type: [String] }) requiredFeatures: string[];
  @ApiProperty({ enum: MUTATION_POLICIES, description: 'As declared in code.' }) mutationPolicy: MutationPolicy;
  @ApiProperty() allowRuntimeOverride: boolean;
  @ApiProperty() defaultProvider: string;
  @ApiProperty() defaultModel: string;
  @ApiProperty({ type: [String] }) acceptedMediaTypes: string[];
  @ApiProperty({ type: [AgentToolSummaryDto] }) tools: AgentToolSummaryDto[];
}

export class AgentListDto {
  @ApiProperty({ type: [AgentSummaryDto] }) agents: AgentSummaryDto[];
}

export class SelectableModelDto {
  @ApiProperty() id: string;
  @ApiProperty() label: string;
  @ApiProperty({ description: 'The agent’s default model.' }) isDefault: boolean;
}

export class SelectableProviderDto {
  @ApiProperty() id: string;
  @ApiProperty() label: string;
  @ApiProperty({ description: 'The agent’s default provider.' }) isDefault: boolean;
  @ApiProperty({ type: [SelectableModelDto] }) models: SelectableModelDto[];
}

export class AgentModelsDto {
  @ApiProperty() agentId: string;
  @ApiProperty() allowRuntimeOverride: boolean;
  @ApiProperty() defaultProvider: string;
  @ApiProperty() defaultModel: string;
  @ApiProperty({ type: [SelectableProviderDto], description: 'Empty when allowRuntimeOverride is false.' })
  providers: SelectableProviderDto[];
}
