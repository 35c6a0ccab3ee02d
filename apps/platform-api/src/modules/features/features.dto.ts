import { ApiProperty } from '@nestjs/swagger';

/** GET /auth/features (platform-api.md "Feature catalogue"), for the OpenAPI document. */

export class FeatureItemDto {
  @ApiProperty({ example: 'auth.roles.list' }) id: string;
  @ApiProperty() title: string;
  @ApiProperty({ description: 'The id of the module that declares it.' }) module: string;
}

export class FeatureModuleDto {
  @ApiProperty() id: string;
  @ApiProperty() title: string;
}

export class FeatureCatalogueDto {
  @ApiProperty({ type: [FeatureItemDto] }) items: FeatureItemDto[];
  @ApiProperty({ type: [FeatureModuleDto] }) modules: FeatureModuleDto[];
}
