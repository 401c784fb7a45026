package dev.nodelet.launcher;

import java.io.PrintStream;
import java.util.Dictionary;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.osgi.framework.BundleContext;
import org.osgi.framework.InvalidSyntaxException;
import org.osgi.framework.ServiceReference;

/**
 * Prints each component problem once (SCR failed activation; a reference unsatisfied for longer than the grace time;
 * a manager's {@code strategy.target} that matches no strategy), and a line when it is over.
 */
final class ComponentReports {

  private static final String STRATEGY = "dev.nodelet.objectcache.StoreStrategy";
  private static final List<String> MANAGER_PIDS = List.of("dev.nodelet.configmap", "dev.nodelet.secret");

  private final Supplier<BundleContext> context;
  private final ComponentHealth health;
  /** Component problems already printed, by component name. */
  private final Map<String, String> reported = new HashMap<>();

  ComponentReports(Supplier<BundleContext> context, ComponentHealth health) {
    this.context = context;
    this.health = health;
  }

  /** Prints what changed since the last call; called every second by the launcher. */
  void report(PrintStream err) {
    BundleContext bundles = context.get();
    if (bundles == null) {
      return;
    }
    Map<String, String> problems = new LinkedHashMap<>(health.problems(bundles));
    problems.putAll(strategyProblems(bundles));
    synchronized (reported) {
      problems.forEach((component, problem) -> {
        if (!problem.equals(reported.put(component, problem))) {
          err.println("nodelet: " + problem);
        }
      });
      for (Iterator<String> it = reported.keySet().iterator(); it.hasNext(); ) {
        String component = it.next();
        if (!problems.containsKey(component)) {
          it.remove();
          err.println("nodelet: " + (component.endsWith("#strategy")
              ? component.substring(0, component.indexOf('#')) + ": strategy.target matches a strategy now"
              : "component " + component + " is no longer failing"));
        }
      }
    }
  }

  /**
   * A manager whose {@code strategy.target} matches no StoreStrategy service serves with its built-in get (and logs
   * that only at INFO); the launcher says it as an error, once, with the names there are.
   */
  private static Map<String, String> strategyProblems(BundleContext context) {
    Map<String, String> problems = new LinkedHashMap<>();
    ServiceReference<?> ref = NodeletFramework.reference(context, "org.osgi.service.cm.ConfigurationAdmin");
    if (ref == null) {
      return problems;
    }
    Object admin = context.getService(ref);
    try {
      Class<?> adminType = ref.getBundle().loadClass("org.osgi.service.cm.ConfigurationAdmin");
      Class<?> configurationType = ref.getBundle().loadClass("org.osgi.service.cm.Configuration");
      for (String pid : MANAGER_PIDS) {
        Object[] configurations = (Object[]) adminType.getMethod("listConfigurations", String.class)
            .invoke(admin, "(service.pid=" + pid + ")");
        Dictionary<?, ?> properties = configurations == null || configurations.length == 0 ? null
            : (Dictionary<?, ?>) configurationType.getMethod("getProperties").invoke(configurations[0]);
        Object target = properties == null ? null : properties.get("strategy.target");
        if (target == null || target.toString().isBlank()) {
          continue;
        }
        ServiceReference<?>[] matching;
        try {
          matching = context.getAllServiceReferences(STRATEGY, target.toString());
        } catch (InvalidSyntaxException e) {
          problems.put(pid + "#strategy", pid + ": strategy.target=" + target + " is not a valid filter ("
              + e.getMessage() + "); write it as (nodelet.strategy=NAME)");
          continue;
        }
        if (matching == null) {
          problems.put(pid + "#strategy", pid + ": strategy.target=" + target + " matches no strategy service"
              + " (there are: " + strategyNames(context) + "); the manager serves with its built-in get until"
              + " one matches. Fix strategy.target in the configuration of " + pid + " (etc/" + pid + ".cfg)");
        }
      }
    } catch (ReflectiveOperationException e) {
      problems.put("strategy", "cannot read the managers' configuration: " + e);
    } finally {
      context.ungetService(ref);
    }
    return problems;
  }

  private static String strategyNames(BundleContext context) {
    try {
      ServiceReference<?>[] refs = context.getAllServiceReferences(STRATEGY, null);
      return refs == null ? "none" : Stream.of(refs).map(r -> String.valueOf(r.getProperty("nodelet.strategy")))
          .sorted().collect(Collectors.joining(", "));
    } catch (InvalidSyntaxException e) {
      throw new IllegalStateException(e);
    }
  }
}
