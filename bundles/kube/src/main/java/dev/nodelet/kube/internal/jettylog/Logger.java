package dev.nodelet.kube.internal.jettylog;

/**
 * The {@code org.slf4j.Logger} methods that Jetty's code calls, as Jetty sees them after relocation. TRACE, DEBUG and
 * INFO are off and print nothing. A WARN or ERROR reaches {@link #report}, which logs no message text or argument of
 * Jetty's: a message may be built from a header or an exception message that quotes one.
 */
public interface Logger {

  String getName();

  /** Logs that Jetty reported a problem at WARN ({@code error} false) or ERROR, naming only the exception types. */
  void report(boolean error, Object[] arguments);

  boolean isWarnEnabled();

  boolean isErrorEnabled();

  default boolean isTraceEnabled() {
    return false;
  }

  default boolean isDebugEnabled() {
    return false;
  }

  default boolean isInfoEnabled() {
    return false;
  }

  default void trace(String msg) {
  }

  default void trace(String format, Object arg) {
  }

  default void trace(String format, Object arg1, Object arg2) {
  }

  default void trace(String format, Object... arguments) {
  }

  default void trace(String msg, Throwable t) {
  }

  default void debug(String msg) {
  }

  default void debug(String format, Object arg) {
  }

  default void debug(String format, Object arg1, Object arg2) {
  }

  default void debug(String format, Object... arguments) {
  }

  default void debug(String msg, Throwable t) {
  }

  default void info(String msg) {
  }

  default void info(String format, Object arg) {
  }

  default void info(String format, Object arg1, Object arg2) {
  }

  default void info(String format, Object... arguments) {
  }

  default void info(String msg, Throwable t) {
  }

  default void warn(String msg) {
    report(false, new Object[0]);
  }

  default void warn(String format, Object arg) {
    report(false, new Object[] {arg});
  }

  default void warn(String format, Object arg1, Object arg2) {
    report(false, new Object[] {arg1, arg2});
  }

  default void warn(String format, Object... arguments) {
    report(false, arguments);
  }

  default void warn(String msg, Throwable t) {
    report(false, new Object[] {t});
  }

  default void error(String msg) {
    report(true, new Object[0]);
  }

  default void error(String format, Object arg) {
    report(true, new Object[] {arg});
  }

  default void error(String format, Object arg1, Object arg2) {
    report(true, new Object[] {arg1, arg2});
  }

  default void error(String format, Object... arguments) {
    report(true, arguments);
  }

  default void error(String msg, Throwable t) {
    report(true, new Object[] {t});
  }
}
