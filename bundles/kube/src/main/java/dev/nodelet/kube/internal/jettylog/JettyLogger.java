package dev.nodelet.kube.internal.jettylog;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/** A Jetty logger that passes WARN and ERROR on to SLF4J's logger of the same name, as exception types only. */
final class JettyLogger implements Logger {
  private final org.slf4j.Logger target;

  JettyLogger(org.slf4j.Logger target) {
    this.target = target;
  }

  @Override
  public String getName() {
    return target.getName();
  }

  @Override
  public boolean isWarnEnabled() {
    return target.isWarnEnabled();
  }

  @Override
  public boolean isErrorEnabled() {
    return target.isErrorEnabled();
  }

  @Override
  public void report(boolean error, Object[] arguments) {
    if (error ? !target.isErrorEnabled() : !target.isWarnEnabled()) {
      return;
    }
    String text = "Jetty reported a problem" + exceptionTypes(arguments)
        + " (its message is not logged: it may quote request headers)";
    if (error) {
      target.error(text);
    } else {
      target.warn(text);
    }
  }

  /** The types of the exceptions among the arguments and their causes, e.g. {@code : IOException <- EOFException}. */
  private static String exceptionTypes(Object[] arguments) {
    List<String> types = new ArrayList<>();
    for (Object argument : arguments) {
      for (Throwable t = argument instanceof Throwable thrown ? thrown : null; t != null && types.size() < 8;
          t = t.getCause()) {
        types.add(t.getClass().getName());
      }
    }
    return types.isEmpty() ? "" : types.stream().collect(Collectors.joining(" <- ", ": ", ""));
  }
}
