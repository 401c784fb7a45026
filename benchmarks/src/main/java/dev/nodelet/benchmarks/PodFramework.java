package dev.nodelet.benchmarks;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Dictionary;
import java.util.Hashtable;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import org.apache.felix.framework.FrameworkFactory;
import org.osgi.framework.BundleActivator;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceReference;
import org.osgi.framework.ServiceRegistration;
import org.osgi.framework.launch.Framework;
import org.osgi.service.cm.ConfigurationAdmin;
import org.osgi.service.cm.ManagedService;

/**
 * The framework pods run in for measure 14: a real Apache Felix with Felix Config Admin (its jar is a resource of
 * this jar, {@code pod-bundles/configadmin.jar}), and the one small bundle every pod runs, written into a Maven
 * repository folder: its activator registers a {@link ManagedService} for the container's PID and reports each
 * configuration it receives (the pod's name and its {@code GREETING}) to the {@link BiConsumer} service the
 * harness registers.
 */
final class PodFramework implements AutoCloseable {

  static final String GROUP = "org.example.bench";
  static final String ARTIFACT = "pod-app";
  static final String VERSION = "1.0.0";
  static final String IMAGE = "mvn:" + GROUP + "/" + ARTIFACT + "/" + VERSION;
  /** The PID the bundle asks for: the default of a container named {@code app}. */
  static final String PID = "dev.nodelet.pod.app";

  final Framework framework;
  final ConfigurationAdmin configurationAdmin;
  private final ServiceRegistration<?> reports;

  /**
   * @param storage the framework's storage folder
   * @param repository the Maven repository folder the bundle is written into
   * @param delivered told of each configuration a pod's bundle receives: the pod's name and its GREETING
   */
  PodFramework(Path storage, Path repository, BiConsumer<String, Object> delivered) throws Exception {
    framework = new FrameworkFactory().newFramework(Map.of(
        "org.osgi.framework.storage", storage.toString(),
        "org.osgi.framework.storage.clean", "onFirstInit",
        "org.osgi.framework.system.packages.extra", "org.osgi.service.cm;version=1.6.0",
        "felix.cm.dir", storage.resolve("cm").toString()));
    framework.start();
    BundleContext context = framework.getBundleContext();
    try (InputStream in = PodFramework.class.getResourceAsStream("/pod-bundles/configadmin.jar")) {
      if (in == null) {
        throw new IllegalStateException("pod-bundles/configadmin.jar is missing from the class path: build the "
            + "benchmarks module with Maven (its dependency plugin copies it)");
      }
      context.installBundle("configadmin", in).start();
    }
    configurationAdmin = context.getService(context.getServiceReference(ConfigurationAdmin.class));
    Dictionary<String, Object> properties = new Hashtable<>(Map.of("nodelet.bench", "pods"));
    reports = context.registerService(BiConsumer.class.getName(), delivered, properties);
    writeBundle(repository);
  }

  private static void writeBundle(Path repository) {
    Path file = repository.resolve(GROUP.replace('.', '/') + "/" + ARTIFACT + "/" + VERSION + "/" + ARTIFACT + "-"
        + VERSION + ".jar");
    Manifest manifest = new Manifest();
    Attributes main = manifest.getMainAttributes();
    main.put(Attributes.Name.MANIFEST_VERSION, "1.0");
    main.putValue("Bundle-ManifestVersion", "2");
    main.putValue("Bundle-SymbolicName", GROUP + "." + ARTIFACT);
    main.putValue("Bundle-Version", VERSION);
    main.putValue("Bundle-Activator", Activator.class.getName());
    main.putValue("Import-Package", "org.osgi.framework, org.osgi.service.cm");
    String name = Activator.class.getName().replace('.', '/') + ".class";
    try {
      Files.createDirectories(file.getParent());
      try (OutputStream out = Files.newOutputStream(file); JarOutputStream jar = new JarOutputStream(out, manifest);
          InputStream in = PodFramework.class.getClassLoader().getResourceAsStream(name)) {
        jar.putNextEntry(new JarEntry(name));
        in.transferTo(jar);
        jar.closeEntry();
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the pods' bundle " + file, e);
    }
  }

  @Override
  public void close() throws Exception {
    reports.unregister();
    framework.stop();
    framework.waitForStop(30_000);
  }

  /** The pods' bundle: a {@link ManagedService} that reports what it receives. Uses only java.* and OSGi types. */
  public static final class Activator implements BundleActivator, ManagedService {

    private volatile BiConsumer<String, Object> report;

    @Override
    @SuppressWarnings("unchecked")
    public void start(BundleContext context) {
      ServiceReference<?> reference = context.getServiceReference("java.util.function.BiConsumer");
      report = reference == null ? null : (BiConsumer<String, Object>) context.getService(reference);
      context.registerService(ManagedService.class, this, new Hashtable<>(Map.of("service.pid", PID)));
    }

    @Override
    public void stop(BundleContext context) {
    }

    @Override
    public void updated(Dictionary<String, ?> properties) {
      BiConsumer<String, Object> to = report;
      if (properties != null && to != null) {
        to.accept((String) properties.get("nodelet.pod.name"), properties.get("GREETING"));
      }
    }
  }
}
