// The API's defaults, apart from the modules that serve it: the CLI names them in its help without
// loading the HTTP server, the token checks or the webhook worker (~0.4 s of CPU at every start).

/** The port `faheem api` listens on by default. */
export const DEFAULT_API_PORT = 8787;

/** The claim naming a token's tenant, and the one naming its scope, unless the operator says otherwise. */
export const DEFAULT_TENANT_CLAIM = 'tenant';
export const DEFAULT_SCOPE_CLAIM = 'scope';
