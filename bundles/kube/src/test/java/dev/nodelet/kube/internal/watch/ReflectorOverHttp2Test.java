package dev.nodelet.kube.internal.watch;

/** Every reflector test over TLS, where the watches are HTTP/2 streams on the client's own sessions. */
class ReflectorOverHttp2Test extends ReflectorTest {

  @Override
  boolean tls() {
    return true;
  }
}
