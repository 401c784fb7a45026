package dev.nodelet.testing.apiserver;

/**
 * A request the server refused because of who sent it (see {@link EmbeddedApiServer.Builder#authorize}).
 *
 * @param status 401 (the bearer token is not one the server knows) or 403 (the user's rules do not allow it)
 * @param user the user of the token, or {@code null} for a 401
 * @param verb the verb as the authorizer saw it (a list with the field selector {@code metadata.name=x} is a list
 *     of the object {@code x})
 * @param apiGroup the API group, empty for the core group
 * @param resource the resource plural with its subresource, e.g. {@code pods/status}; {@code null} for a path that
 *     is not a resource, such as {@code /version}
 * @param namespace the namespace, or {@code null} at cluster scope
 * @param name the object's name, or {@code null} when the request names none
 * @param message the message of the {@code Status} the client received
 */
public record DeniedRequest(int status, String user, Verb verb, String apiGroup, String resource, String namespace,
    String name, String message) {
}
