package dev.nodelet.kube.internal.jettylog;

/**
 * The logger factory of the embedded Jetty client: its {@code org.slf4j} references are relocated here when
 * {@code nodelet-kube-jetty} is built. Jetty prints request and response headers (bearer tokens) and body bytes at
 * DEBUG, and a logging configuration could turn that on; these loggers drop everything below WARN whatever the
 * configuration, and pass on WARN and ERROR without Jetty's text (see {@link Logger}).
 */
public final class LoggerFactory {

  private LoggerFactory() {
  }

  /** @return the logger of a (relocated) Jetty class */
  public static Logger getLogger(Class<?> type) {
    return getLogger(type.getName());
  }

  /** @return the logger of that name */
  public static Logger getLogger(String name) {
    return new JettyLogger(org.slf4j.LoggerFactory.getLogger(name));
  }
}
