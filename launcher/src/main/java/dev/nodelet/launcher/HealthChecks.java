package dev.nodelet.launcher;

import java.util.ArrayList;
import java.util.List;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceReference;

/**
 * Runs the readiness checks (tag {@code nodelet}, as {@code /readyz} does) through the Felix Health Checks executor.
 * The launcher does not see the Health Checks API (its class path is not the framework's), so it calls the API as
 * loaded by the executor's bundle.
 */
final class HealthChecks {

  private static final String API = "org.apache.felix.hc.api.";
  static final String NO_EXECUTOR = "no health check executor (bundle org.apache.felix.healthcheck.core)";

  /**
   * The result of one check.
   *
   * @param passed OK or WARN
   * @param summary {@code health check NAME: STATUS messages} when it did not pass; its messages when it did
   */
  record Check(String name, boolean passed, String summary) {
  }

  private HealthChecks() {
  }

  /**
   * Runs the checks now (the executor's cached results, 2 s old, could predate the pods' registration).
   *
   * @return the checks; a single failed check named {@code ""} if they cannot be run or there are none
   */
  static List<Check> run(BundleContext context) {
    ServiceReference<?> ref = NodeletFramework.reference(context, API + "execution.HealthCheckExecutor");
    Object executor = ref == null ? null : context.getService(ref);
    if (executor == null) {
      return List.of(new Check("", false, NO_EXECUTOR));
    }
    List<Check> checks = new ArrayList<>();
    try {
      Bundle bundle = ref.getBundle();
      Class<?> selectorType = bundle.loadClass(API + "execution.HealthCheckSelector");
      Class<?> resultType = bundle.loadClass(API + "execution.HealthCheckExecutionResult");
      Class<?> metadataType = bundle.loadClass(API + "execution.HealthCheckMetadata");
      Class<?> checkResultType = bundle.loadClass(API + "Result");
      Class<?> entryType = bundle.loadClass(API + "ResultLog$Entry");
      Class<?> optionsType = bundle.loadClass(API + "execution.HealthCheckExecutionOptions");
      Object selector = selectorType.getMethod("tags", String[].class).invoke(null, (Object) new String[] {"nodelet"});
      Object options = optionsType.getMethod("setForceInstantExecution", boolean.class)
          .invoke(optionsType.getConstructor().newInstance(), true);
      List<?> results = (List<?>) bundle.loadClass(API + "execution.HealthCheckExecutor")
          .getMethod("execute", selectorType, optionsType).invoke(executor, selector, options);
      if (results.isEmpty()) {
        return List.of(new Check("", false, "no health check tagged nodelet yet"));
      }
      for (Object result : results) {
        Object checkResult = resultType.getMethod("getHealthCheckResult").invoke(result);
        String status = String.valueOf(checkResultType.getMethod("getStatus").invoke(checkResult));
        String name = String.valueOf(metadataType.getMethod("getName").invoke(
            resultType.getMethod("getHealthCheckMetadata").invoke(result)));
        List<String> messages = new ArrayList<>();
        for (Object entry : (Iterable<?>) checkResult) {
          if (!(Boolean) entryType.getMethod("isDebug").invoke(entry)) {
            messages.add(String.valueOf(entryType.getMethod("getMessage").invoke(entry)));
          }
        }
        boolean passed = status.equals("OK") || status.equals("WARN");
        checks.add(new Check(name, passed, passed ? String.join("; ", messages)
            : "health check " + name + ": " + status + " " + String.join("; ", messages)));
      }
    } catch (ReflectiveOperationException | ClassCastException e) {
      checks.add(new Check("", false, "cannot run the health checks: " + e));
    } finally {
      context.ungetService(ref);
    }
    return checks;
  }
}
