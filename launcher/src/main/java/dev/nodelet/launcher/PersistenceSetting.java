package dev.nodelet.launcher;

import java.util.Dictionary;
import java.util.List;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceReference;

/**
 * Whether a store strategy keeps its objects on disk: {@code persistence.dir} set in the configuration of
 * {@code dev.nodelet.store.watch} or {@code dev.nodelet.store.ttl}, as Config Admin holds it ({@code etc/} files
 * included). The launcher does not see Config Admin's API, so it calls it by reflection.
 */
final class PersistenceSetting {

  static final List<String> PIDS = List.of("dev.nodelet.store.watch", "dev.nodelet.store.ttl");

  private PersistenceSetting() {
  }

  static boolean on(BundleContext context) {
    if (context == null) {
      return false;
    }
    ServiceReference<?> ref = NodeletFramework.reference(context, "org.osgi.service.cm.ConfigurationAdmin");
    if (ref == null) {
      return false;
    }
    Object admin = context.getService(ref);
    try {
      Class<?> adminType = ref.getBundle().loadClass("org.osgi.service.cm.ConfigurationAdmin");
      Class<?> configurationType = ref.getBundle().loadClass("org.osgi.service.cm.Configuration");
      for (String pid : PIDS) {
        Object[] configurations = (Object[]) adminType.getMethod("listConfigurations", String.class)
            .invoke(admin, "(service.pid=" + pid + ")");
        if (configurations == null || configurations.length == 0) {
          continue;
        }
        Dictionary<?, ?> properties =
            (Dictionary<?, ?>) configurationType.getMethod("getProperties").invoke(configurations[0]);
        Object dir = properties == null ? null : properties.get("persistence.dir");
        if (dir != null && !dir.toString().isBlank()) {
          return true;
        }
      }
      return false;
    } catch (ReflectiveOperationException | RuntimeException e) {
      return false; // unreadable (Config Admin stopping): the default limit applies, as without persistence
    } finally {
      context.ungetService(ref);
    }
  }
}
