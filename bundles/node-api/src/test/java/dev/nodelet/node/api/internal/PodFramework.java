package dev.nodelet.node.api.internal;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.jar.Attributes;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import org.apache.felix.framework.FrameworkFactory;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.BundleException;
import org.osgi.framework.Constants;
import org.osgi.framework.launch.Framework;
import org.osgi.service.log.LogReaderService;
import org.osgi.service.log.Logger;
import org.osgi.service.log.LoggerFactory;

/**
 * A real Felix with the Felix log service, in which a test installs bundles at pod containers' locations and logs
 * through them, as a pod's bundles do.
 */
final class PodFramework implements AutoCloseable {

  private final Framework framework;

  PodFramework(Path storage) throws BundleException, IOException {
    // the log API comes from the test's class path, so that the test and the framework share its classes
    framework = new FrameworkFactory().newFramework(Map.of(
        Constants.FRAMEWORK_STORAGE, storage.toString(),
        Constants.FRAMEWORK_STORAGE_CLEAN, Constants.FRAMEWORK_STORAGE_CLEAN_ONFIRSTINIT,
        Constants.FRAMEWORK_SYSTEMPACKAGES_EXTRA,
        "org.osgi.service.log;version=1.5.0,org.osgi.service.log.admin;version=1.0.0",
        // the log service records from INFO on (its default is WARN), as a node that serves its pods' logs
        "org.osgi.service.log.admin.loglevel", "INFO"));
    framework.start();
    String log = org.apache.felix.log.Activator.class.getProtectionDomain().getCodeSource().getLocation()
        .toString();
    framework.getBundleContext().installBundle(log).start();
  }

  BundleContext context() {
    return framework.getBundleContext();
  }

  LogReaderService logReader() {
    BundleContext context = context();
    return context.getService(context.getServiceReference(LogReaderService.class));
  }

  /** Installs and starts an empty bundle at {@code location}. */
  Bundle install(String location, String symbolicName) throws BundleException, IOException {
    Manifest manifest = new Manifest();
    Attributes main = manifest.getMainAttributes();
    main.put(Attributes.Name.MANIFEST_VERSION, "1.0");
    main.putValue(Constants.BUNDLE_MANIFESTVERSION, "2");
    main.putValue(Constants.BUNDLE_SYMBOLICNAME, symbolicName);
    main.putValue(Constants.BUNDLE_VERSION, "1.0.0");
    ByteArrayOutputStream jar = new ByteArrayOutputStream();
    try (JarOutputStream out = new JarOutputStream(jar, manifest)) {
      out.flush();
    }
    Bundle bundle = context().installBundle(location, new ByteArrayInputStream(jar.toByteArray()));
    bundle.start();
    return bundle;
  }

  /** A logger of the log service as {@code bundle} gets it: its records name that bundle. */
  static Logger logger(Bundle bundle, String name) {
    BundleContext context = bundle.getBundleContext();
    return context.getService(context.getServiceReference(LoggerFactory.class)).getLogger(name);
  }

  @Override
  public void close() throws Exception {
    framework.stop();
    framework.waitForStop(10_000);
  }
}
