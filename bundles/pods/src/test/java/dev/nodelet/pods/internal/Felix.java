package dev.nodelet.pods.internal;

import java.nio.file.Path;
import java.util.Map;
import org.apache.felix.framework.FrameworkFactory;
import org.osgi.framework.BundleContext;
import org.osgi.framework.launch.Framework;
import org.osgi.service.cm.ConfigurationAdmin;

/**
 * A real Apache Felix framework with Felix Config Admin, for tests: the system bundle exports the Config Admin API
 * of the test's class path, so the test and the framework share its types.
 */
final class Felix implements AutoCloseable {

  final Framework framework;
  final ConfigurationAdmin configurationAdmin;

  Felix(Path storage) throws Exception {
    framework = new FrameworkFactory().newFramework(Map.of(
        "org.osgi.framework.storage", storage.toString(),
        "org.osgi.framework.storage.clean", "onFirstInit",
        "org.osgi.framework.system.packages.extra", "org.osgi.service.cm;version=1.6.0",
        "felix.cm.dir", storage.resolve("cm").toString()));
    framework.start();
    Path configAdmin = Path.of(Class.forName("org.apache.felix.cm.impl.ConfigurationManager")
        .getProtectionDomain().getCodeSource().getLocation().toURI());
    context().installBundle(configAdmin.toUri().toString()).start();
    var reference = context().getServiceReference(ConfigurationAdmin.class);
    configurationAdmin = context().getService(reference);
  }

  /** Installs and starts Felix SCR (Declarative Services) and the API bundles it needs, from the class path. */
  Felix withDeclarativeServices() throws Exception {
    for (String type : new String[] {"org.osgi.util.function.Function", "org.osgi.util.promise.Promise",
        "org.osgi.service.component.ComponentContext", "org.apache.felix.scr.impl.Activator"}) {
      Path jar = Path.of(Class.forName(type).getProtectionDomain().getCodeSource().getLocation().toURI());
      context().installBundle(jar.toUri().toString());
    }
    for (org.osgi.framework.Bundle bundle : context().getBundles()) {
      if ("org.apache.felix.scr".equals(bundle.getSymbolicName())) {
        bundle.start();
      }
    }
    return this;
  }

  BundleContext context() {
    return framework.getBundleContext();
  }

  /** Stops the framework, keeping its storage: a new Felix on it finds the bundles installed before. */
  @Override
  public void close() throws Exception {
    framework.stop();
    framework.waitForStop(10_000);
  }
}
