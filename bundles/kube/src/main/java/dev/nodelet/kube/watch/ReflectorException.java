package dev.nodelet.kube.watch;

/** A failed list or watch of a {@link Reflector}; {@link #status()} is the HTTP status, 0 if none came. */
public class ReflectorException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  private final int status;

  /**
   * @param message what failed, naming the resource
   * @param status the HTTP status of the answer, 0 if none came
   * @param cause the underlying failure, may be {@code null}
   */
  public ReflectorException(String message, int status, Throwable cause) {
    super(message, cause);
    this.status = status;
  }

  /** @return the HTTP status of the server's answer, 0 if the request got no answer */
  public int status() {
    return status;
  }
}
