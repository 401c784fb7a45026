package dev.nodelet.cache.core;

import dev.nodelet.cache.core.internal.Quote;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.UnknownHostException;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpTimeoutException;

/**
 * Failures of requests to the API server in words an operator can act on, for stores to put in their errors. fabric8
 * reports a request that got no answer as {@code An error has occurred.}; these say that the API server is
 * unreachable, or did not answer in time, and for which object.
 *
 * @since 1.5
 */
public final class ApiServerErrors {

  private ApiServerErrors() {
  }

  /**
   * Why a request failed, e.g. {@code the API server is unreachable (java.net.ConnectException)} or
   * {@code the API server answered 503: ...}. Names exception types and the API server's status message, never
   * object data.
   *
   * @param failure the failure of a request, as fabric8 reports it
   * @return the reason, in lower case, without a final full stop
   */
  public static String reason(Throwable failure) {
    Throwable root = failure;
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof ConnectException || t instanceof UnknownHostException || t instanceof NoRouteToHostException
          || t instanceof HttpConnectTimeoutException) {
        return "the API server is unreachable (" + t + ")";
      }
      if (t instanceof HttpTimeoutException) {
        return "the API server did not answer in time (" + t + ")";
      }
      if (t instanceof KubernetesClientException k && k.getCode() > 0) {
        String status = k.getStatus() == null ? null : k.getStatus().getMessage();
        return "the API server answered " + k.getCode() + (status == null ? "" : ": " + status);
      }
      root = t;
    }
    return "the request to the API server failed (" + root + ")";
  }

  /**
   * The error of a get of one object that failed with nothing to serve instead. An answer of the API server (an HTTP
   * status) is returned as fabric8 reported it; a request without an answer becomes
   * {@code cannot get configmaps "ns"/"name": the API server is unreachable (java.net.ConnectException)}, with the
   * failure as its cause.
   *
   * @param resource the plural resource name, e.g. {@code configmaps}
   * @param namespace the object's namespace
   * @param name the object's name
   * @param failure the failure of the get
   * @return the exception to throw
   */
  public static KubernetesClientException getFailed(String resource, String namespace, String name,
      KubernetesClientException failure) {
    if (failure.getCode() > 0) {
      return failure;
    }
    return new KubernetesClientException("cannot get " + resource + " " + Quote.of(namespace) + "/"
        + Quote.of(name) + ": " + reason(failure), failure);
  }
}
