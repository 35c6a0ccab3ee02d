import { DomainError } from '@app/service-kit';

/** The typed 400s of provider selection (platform-api.md "Errors" 3, decisions.md "AI assistant"). */
const badRequest = (code: string, message: string) => new DomainError(code, message, { status: 400 });

export const RuntimeErrors = {
  runtimeOverrideDisabled: (agentId: string) =>
    badRequest('runtime_override_disabled', `agent ${agentId} does not allow provider, model or baseUrl overrides`),
  providerUnknown: (providerId: string) => badRequest('provider_unknown', `unknown provider ${providerId}`),
  providerNotConfigured: (providerId: string) => badRequest('provider_not_configured', `provider ${providerId} is not configured`),
  baseUrlNotAllowlisted: () => badRequest('baseurl_not_allowlisted', 'baseUrl is not in AI_RUNTIME_BASEURL_ALLOWLIST'),
  /** Production (without AI_BASEURL_ALLOW_PRIVATE): a base URL naming a private, loopback or link-local address. */
  baseUrlNotAllowed: () => badRequest('baseurl_not_allowed', 'baseUrl must not point to a private, loopback or link-local address'),
  invalidBaseUrl: (field: string) => badRequest('invalid_url', `${field} must be an http(s) URL without credentials`),
  providerNotInEnvAllowlist: (providerId: string) =>
    badRequest('provider_not_in_env_allowlist', `provider ${providerId} is not in AI_ALLOWED_PROVIDERS`),
  modelNotInEnvAllowlist: (modelId: string) => badRequest('model_not_in_env_allowlist', `model ${modelId} is not in AI_ALLOWED_MODELS`),
  /** A provider outside the tenant's allowlist or the settings' allowedOverrideProviders. */
  providerNotAllowed: (providerId: string) => badRequest('provider_not_allowed', `provider ${providerId} is not allowed in this tenant`),
  modelNotAllowed: (modelId: string) => badRequest('model_not_allowed', `model ${modelId} is not allowed in this tenant`),
};
