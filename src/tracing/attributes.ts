/**
 * The span attributes coregate records, by their OpenTelemetry semantic-convention names
 * (https://opentelemetry.io/docs/specs/semconv/), and the few of its own. Spelled out here rather
 * than imported from @opentelemetry/semantic-conventions: a dozen names are not worth loading its
 * thousands at every start, traced or not.
 *
 * What a span may carry is this list and nothing else: never a token, a secret, a header, a body,
 * a URL's path (it holds contract and loan numbers) or an error's message (it may quote a value).
 */
export const attribute = {
  httpRequestMethod: 'http.request.method',
  httpRoute: 'http.route',
  httpResponseStatusCode: 'http.response.status_code',
  urlScheme: 'url.scheme',
  /** The remote core's path with its identifiers as placeholders (`/term-deposit-constitutions/{reference}`). */
  urlTemplate: 'url.template',
  serverAddress: 'server.address',
  serverPort: 'server.port',
  /** An error's class (`CoreTimeout`) or a 5xx status code: never its message. */
  errorType: 'error.type',
  /** The database, as current semantic conventions name it (`postgresql`, `sqlite`). */
  dbSystemName: 'db.system.name',
  /** The same, under its earlier name, which many tracing back ends still index. */
  dbSystem: 'db.system',
  /** The OAuth client of the verified Bearer token. */
  clientId: 'coregate.client_id',
  /** The request's x-correlation-id, when it is a valid one (docs/api.md, "Correlation ids and duplicates"). */
  correlationId: 'coregate.correlation_id',
} as const;
