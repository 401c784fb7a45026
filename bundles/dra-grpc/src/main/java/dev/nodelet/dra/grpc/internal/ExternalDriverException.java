package dev.nodelet.dra.grpc.internal;

/** A failure of an external driver, with a message that names the driver and, where it applies, its socket. */
final class ExternalDriverException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  ExternalDriverException(String message) {
    super(message);
  }

  ExternalDriverException(String message, Throwable cause) {
    super(message, cause);
  }
}
