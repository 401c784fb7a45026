package dev.nodelet.launcher;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.Constants;
import org.osgi.framework.ServiceReference;

/**
 * Whether the framework is ready, and else what it waits for: every bundle active, the required services registered,
 * no component failing, and the readiness checks passing ({@link HealthChecks}, as {@code /readyz}). While the node's
 * check ({@value #NODE_CHECK}) does not pass, the line says why, asking the API server for the node.
 */
final class Readiness {

  static final List<String> REQUIRED_SERVICES = List.of(
      "io.fabric8.kubernetes.client.KubernetesClient", "dev.nodelet.kube.NodeIdentity",
      "dev.nodelet.objectcache.StoreStrategy", "dev.nodelet.objectcache.ConfigMapManager",
      "dev.nodelet.objectcache.SecretManager");

  /** The check that NodeIdentity serves the node with its UID, which proves the client reached the API server. */
  static final String NODE_CHECK = "nodelet-node";
  private static final String HAS_UID = " has UID ";

  private final Supplier<BundleContext> context;
  private final ComponentHealth health;
  /** Whether the launcher starts a bundle: one it leaves installed is not waited for. */
  private final Predicate<Bundle> started;
  private long nextProbe;
  private String probed = "";

  Readiness(Supplier<BundleContext> context, ComponentHealth health, Predicate<Bundle> started) {
    this.context = context;
    this.health = health;
    this.started = started;
  }

  /** @param probe whether to ask the API server for the node when its check fails (at most every 2 s) */
  NodeletFramework.Status status(String nodeName, boolean probe) {
    BundleContext bundles = context.get();
    List<String> missing = new ArrayList<>();
    long active = 0;
    for (Bundle bundle : bundles.getBundles()) {
      boolean fragment = bundle.getHeaders().get(Constants.FRAGMENT_HOST) != null;
      if (bundle.getState() == Bundle.ACTIVE) {
        active++;
      } else if (!fragment && started.test(bundle)) {
        missing.add("bundle " + bundle.getSymbolicName() + " not active");
      }
    }
    List<String> services = new ArrayList<>();
    for (String service : REQUIRED_SERVICES) {
      if (NodeletFramework.reference(bundles, service) == null) {
        missing.add("no " + service + " service");
      } else {
        services.add(service.substring(service.lastIndexOf('.') + 1));
      }
    }
    List<HealthChecks.Check> checks = HealthChecks.run(bundles);
    Optional<HealthChecks.Check> node = checks.stream().filter(c -> c.name().equals(NODE_CHECK))
        .filter(HealthChecks.Check::passed).findFirst();
    if (node.isPresent()) {
      String said = node.get().summary(); // "node NAME has UID UID"
      int uid = said.indexOf(HAS_UID);
      services.add(uid < 0 ? said : "node UID " + said.substring(uid + HAS_UID.length()));
    } else {
      missing.add(probe ? probeNode(bundles, nodeName) : "node " + nodeName + " not seen through the API server yet");
    }
    health.problems(bundles).values().forEach(missing::add);
    checks.stream().filter(c -> !c.passed() && !c.name().equals(NODE_CHECK)).map(HealthChecks.Check::summary)
        .forEach(missing::add);
    return new NodeletFramework.Status(missing.isEmpty(), String.join("; ", missing), active, services);
  }

  /**
   * Why the node is not there: asks the API server for it through the bundles' KubernetesClient (at most every two
   * seconds), so that the line names the API server's URL and what it answered.
   */
  private String probeNode(BundleContext context, String nodeName) {
    if (System.nanoTime() < nextProbe) {
      return probed;
    }
    nextProbe = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
    String service = "io.fabric8.kubernetes.client.KubernetesClient";
    ServiceReference<?> ref = NodeletFramework.reference(context, service);
    if (ref == null) {
      return probed = "no " + service + " service (see the configuration of dev.nodelet.kube)";
    }
    Object client = context.getService(ref);
    String url = "the API server";
    try {
      Bundle bundle = ref.getBundle();
      Class<?> type = bundle.loadClass(service);
      url = "the API server at " + type.getMethod("getMasterUrl").invoke(client);
      Object nodes = type.getMethod("nodes").invoke(client);
      // through fabric8's own bundle: the registering bundle need not import the dsl package
      ClassLoader fabric8 = type.getClassLoader();
      Object resource = fabric8.loadClass("io.fabric8.kubernetes.client.dsl.Nameable")
          .getMethod("withName", String.class).invoke(nodes, nodeName);
      Object node = fabric8.loadClass("io.fabric8.kubernetes.client.dsl.Gettable").getMethod("get").invoke(resource);
      probed = node == null
          ? "node " + nodeName + " does not exist on " + url + " (is --node the name of one of its nodes?)"
          : "node " + nodeName + " exists on " + url + "; NodeIdentity has not seen it yet";
    } catch (java.lang.reflect.InvocationTargetException e) {
      Throwable cause = e.getCause();
      while (cause.getCause() != null && cause.getCause() != cause) {
        cause = cause.getCause();
      }
      probed = url + " has not answered (" + cause.getClass().getSimpleName()
          + (cause.getMessage() == null ? "" : ": " + cause.getMessage()) + ")";
    } catch (ReflectiveOperationException | RuntimeException e) {
      probed = "cannot ask " + url + " for node " + nodeName + ": " + e;
    } finally {
      context.ungetService(ref);
    }
    return probed;
  }
}
