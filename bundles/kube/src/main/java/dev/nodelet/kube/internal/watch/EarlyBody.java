package dev.nodelet.kube.internal.watch;

import io.fabric8.kubernetes.client.http.AsyncBody;

/**
 * A body consumer that a transport tells of its request's body as soon as the request is sent, before the response
 * arrives: cancelling that body ends the request at the server at once, and tells when the request actually leaves.
 * Transports that do not know this interface hand the body over with the response only.
 */
public interface EarlyBody {

  /** The request is on its way; {@code body} cancels it, also before its response. */
  void sent(AsyncBody body);

  /**
   * The request left for the server (its stream opened), after {@link #sent} and perhaps after waiting for a
   * connection: its response is due from now on.
   */
  void started();

  /**
   * The gate this request passes when it actually starts, for a transport that holds requests until it has a stream
   * for them (see {@link StartGate.Transport}).
   *
   * @return null when the request starts as soon as it can
   */
  default StartGate gate() {
    return null;
  }
}
