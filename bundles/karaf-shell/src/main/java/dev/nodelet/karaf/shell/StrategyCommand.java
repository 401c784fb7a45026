package dev.nodelet.karaf.shell;

import dev.nodelet.objectcache.ObjectManager;
import dev.nodelet.shell.views.ObjectViews;
import dev.nodelet.objectcache.StoreStrategy;
import java.util.Collection;
import java.util.Dictionary;
import java.util.Hashtable;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.apache.karaf.shell.api.action.Argument;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Option;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.osgi.framework.BundleContext;
import org.osgi.framework.InvalidSyntaxException;
import org.osgi.framework.ServiceReference;
import org.osgi.service.cm.Configuration;
import org.osgi.service.cm.ConfigurationAdmin;

/**
 * {@code nodelet:strategy [<configmap|secret> [<strategy>]]}: the strategy each manager uses, or one manager's; with a
 * strategy name, writes {@code strategy.target} of the manager's configuration (the manager moves once Config Admin
 * has delivered it).
 */
@Service
@Command(scope = "nodelet", name = "strategy", description = "Shows the store strategy of the ConfigMap and Secret "
    + "managers, or makes one manager use another strategy (get, ttl, watch, ...)")
public class StrategyCommand extends ManagersCommand {

  @Reference
  BundleContext bundleContext;

  @Reference(optional = true)
  ConfigurationAdmin configurationAdmin;

  @Option(name = "--force", aliases = "-f", description = "Set a strategy that is not installed yet; the manager "
      + "serves with its built-in get until it is")
  boolean force;

  @Argument(index = 0, name = "kind", description = "configmap (cm) or secret; all managers if not given")
  String kind;

  @Argument(index = 1, name = "strategy", description = "The strategy to use, e.g. get, ttl or watch")
  String strategy;

  @Override
  public Object execute() throws Exception {
    if (kind == null) {
      System.out.print(ObjectViews.strategies(managers));
      return null;
    }
    ObjectManager<?> manager = ObjectViews.manager(managers, kind);
    if (strategy == null) {
      System.out.println(ObjectViews.strategy(manager));
      return null;
    }
    String target = ObjectViews.strategyTarget(strategy);
    Set<String> installed = installedStrategies();
    if (!force && !installed.contains(strategy)) {
      throw new IllegalArgumentException("no strategy " + strategy + " is installed (installed: "
          + String.join(", ", installed) + "); --force sets it anyway, and the manager serves with its built-in get "
          + "until it is installed");
    }
    String pid = pid(manager.type().plural());
    if (configurationAdmin == null || pid == null) {
      throw new IllegalStateException("no ConfigurationAdmin service: the strategy of " + manager.type()
          + " cannot be configured");
    }
    // "?": the configuration stays visible to the manager's bundle rather than being bound to this one
    Configuration configuration = configurationAdmin.getConfiguration(pid, "?");
    Dictionary<String, Object> properties = Optional.ofNullable(configuration.getProperties())
        .orElseGet(Hashtable::new);
    properties.put("strategy.target", target);
    configuration.update(properties);
    System.out.println(pid + ": strategy.target=" + target);
    return null;
  }

  /** The names of the strategy services there are, from their properties (no service is got). */
  private Set<String> installedStrategies() throws InvalidSyntaxException {
    Set<String> names = new TreeSet<>();
    for (ServiceReference<StoreStrategy> reference : bundleContext.getServiceReferences(StoreStrategy.class, null)) {
      names.add(String.valueOf(reference.getProperty(StoreStrategy.PROPERTY)));
    }
    return names;
  }

  /** The configuration PID of the manager service of a resource, from its service properties. */
  private String pid(String plural) throws InvalidSyntaxException {
    @SuppressWarnings("rawtypes")
    Collection<ServiceReference<ObjectManager>> references = bundleContext.getServiceReferences(
        ObjectManager.class, "(" + ObjectManager.RESOURCE_PROPERTY + "=" + plural + ")");
    return references.stream().map(r -> r.getProperty(ObjectManager.PID_PROPERTY)).filter(p -> p != null)
        .map(Object::toString).findFirst().orElse(null);
  }
}
