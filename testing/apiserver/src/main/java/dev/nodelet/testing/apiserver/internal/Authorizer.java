package dev.nodelet.testing.apiserver.internal;

import dev.nodelet.testing.apiserver.DeniedRequest;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Bearer-token authentication and RBAC authorization. A request with a known token is allowed what the rules of
 * its user allow, decided as the API server's RBAC authorizer does ({@code rbac/v1} rule matching); a request
 * without any {@code Authorization} header is allowed everything, so tests that use no token are unaffected.
 * Paths that are not resources (discovery, {@code /version}) are open to every known user, as the
 * {@code system:discovery} role makes them on a real cluster. The admin token, if any, is allowed everything as no
 * token is: kubectl asks for a password on an HTTPS server when its kubeconfig names no credentials.
 */
public final class Authorizer {

  private static final Logger LOG = LoggerFactory.getLogger(Authorizer.class);
  private static final String BEARER = "Bearer ";

  /** Who a token stands for and what that user may do. */
  public record Subject(String user, List<PolicyRule> rules) {
    public Subject {
      rules = List.copyOf(rules);
    }
  }

  private final Map<String, Subject> byToken;
  private final String adminHeader; // null: no admin token
  private final List<DeniedRequest> denied = new CopyOnWriteArrayList<>();

  public Authorizer(Map<String, Subject> byToken, String adminToken) {
    this.byToken = Map.copyOf(byToken);
    this.adminHeader = adminToken == null ? null : BEARER + adminToken;
  }

  public List<DeniedRequest> denied() {
    return List.copyOf(denied);
  }

  public void clearDenied() {
    denied.clear();
  }

  /** {@code null} when the request may go on; else the 401 or 403 answer, recorded. */
  MockResponse check(RecordedRequest request) {
    String header = request.getHeader("Authorization");
    if (byToken.isEmpty() || header == null || header.equals(adminHeader)) {
      return null;
    }
    Access access = Access.of(request.method(), request.getPath());
    Subject subject = header.regionMatches(true, 0, BEARER, 0, BEARER.length())
        ? byToken.get(header.substring(BEARER.length()).trim()) : null;
    if (subject == null) {
      deny(401, null, access, "Unauthorized");
      return Status.response(401, "Unauthorized");
    }
    if (!access.resourceRequest() || subject.rules().stream().anyMatch(rule -> allows(rule, access))) {
      return null;
    }
    String message = forbiddenMessage(subject.user(), access);
    deny(403, subject.user(), access, message);
    return Status.forbidden(access.apiGroup(), access.resource(), access.name(), message);
  }

  private void deny(int status, String user, Access access, String message) {
    LOG.info("{} {} {}: {}", status, access.verb(), access.path(), message);
    denied.add(new DeniedRequest(status, user, access.verb(), access.apiGroup(),
        access.resourceRequest() ? access.qualifiedResource() : null, emptyToNull(access.namespace()),
        emptyToNull(access.name()), message));
  }

  /** The rule matching of {@code k8s.io/component-helpers/auth/rbac/validation}. */
  static boolean allows(PolicyRule rule, Access access) {
    return matches(rule.getVerbs(), access.rbacVerb())
        && matches(rule.getApiGroups(), access.apiGroup())
        && resourceMatches(rule.getResources(), access)
        && (isEmpty(rule.getResourceNames()) || rule.getResourceNames().contains(access.name()));
  }

  private static boolean matches(List<String> allowed, String requested) {
    return allowed != null && (allowed.contains("*") || allowed.contains(requested));
  }

  private static boolean resourceMatches(List<String> allowed, Access access) {
    if (allowed == null) {
      return false;
    }
    for (String resource : allowed) {
      if (resource.equals("*") || resource.equals(access.qualifiedResource())
          || (!access.subresource().isEmpty() && resource.equals("*/" + access.subresource()))) {
        return true;
      }
    }
    return false;
  }

  /** The message of the API server's Forbidden status ({@code responsewriters.forbiddenMessage}). */
  static String forbiddenMessage(String user, Access access) {
    String groupResource = access.apiGroup().isEmpty() ? access.resource()
        : access.resource() + "." + access.apiGroup();
    String what = access.name().isEmpty() ? groupResource : groupResource + " \"" + access.name() + "\"";
    String scope = access.namespace().isEmpty() ? "at the cluster scope"
        : "in the namespace \"" + access.namespace() + "\"";
    return what + " is forbidden: User \"" + user + "\" cannot " + access.rbacVerb() + " resource \""
        + access.qualifiedResource() + "\" in API group \"" + access.apiGroup() + "\" " + scope;
  }

  private static boolean isEmpty(List<String> list) {
    return list == null || list.isEmpty();
  }

  private static String emptyToNull(String s) {
    return s.isEmpty() ? null : s;
  }
}
