package dev.nodelet.kube.internal.watch;

import io.fabric8.kubernetes.client.http.HttpRequest;

/**
 * What a request passes when it actually starts: the restart bucket, counted over the starts really made, so that
 * requests a transport held (waiting for a connection) do not leave together once it is ready.
 */
public interface StartGate {

  /**
   * Takes one start now if the gate leaves room for it.
   *
   * @return 0 if the start was taken; otherwise the nanoseconds from now after which one would conform (nothing
   *     taken)
   */
  long tryStart();

  /** A transport that asks a request's {@link EarlyBody#gate()} itself, right before the request's stream starts. */
  interface Transport {

    /** Whether this transport would take the request and ask its gate when it starts. */
    boolean gates(HttpRequest request);
  }
}
