package dev.nodelet.pods.internal;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import org.osgi.framework.BundleActivator;

/** Bundles made for tests, written into a Maven repository layout. */
final class TestBundles {

  private TestBundles() {
  }

  /** Writes a bundle as {@code group/artifact/version} into the repository; returns its file. */
  static Path write(Path repository, String group, String artifact, String version,
      Class<? extends BundleActivator> activator) throws IOException {
    Path file = repository.resolve(group.replace('.', '/') + "/" + artifact + "/" + version + "/" + artifact + "-"
        + version + ".jar");
    Files.createDirectories(file.getParent());
    Manifest manifest = new Manifest();
    Attributes main = manifest.getMainAttributes();
    main.put(Attributes.Name.MANIFEST_VERSION, "1.0");
    main.putValue("Bundle-ManifestVersion", "2");
    main.putValue("Bundle-SymbolicName", group + "." + artifact);
    main.putValue("Bundle-Version", version);
    if (activator != null) {
      main.putValue("Bundle-Activator", activator.getName());
      main.putValue("Import-Package", "org.osgi.framework");
    }
    try (OutputStream out = Files.newOutputStream(file); JarOutputStream jar = new JarOutputStream(out, manifest)) {
      if (activator != null) {
        String name = activator.getName().replace('.', '/') + ".class";
        jar.putNextEntry(new JarEntry(name));
        try (InputStream in = activator.getClassLoader().getResourceAsStream(name)) {
          in.transferTo(jar);
        }
        jar.closeEntry();
      }
    }
    return file;
  }

  /**
   * Writes a bundle with one Declarative Services component of the class, on the configuration PID (required),
   * with {@code activate} and {@code modified} methods taking a {@code Map}, providing
   * {@code java.util.function.Supplier}.
   */
  static Path writeComponent(Path repository, String group, String artifact, String version, String pid,
      Class<?> component) throws IOException {
    Path file = repository.resolve(group.replace('.', '/') + "/" + artifact + "/" + version + "/" + artifact + "-"
        + version + ".jar");
    Files.createDirectories(file.getParent());
    Manifest manifest = new Manifest();
    Attributes main = manifest.getMainAttributes();
    main.put(Attributes.Name.MANIFEST_VERSION, "1.0");
    main.putValue("Bundle-ManifestVersion", "2");
    main.putValue("Bundle-SymbolicName", group + "." + artifact);
    main.putValue("Bundle-Version", version);
    main.putValue("Service-Component", "OSGI-INF/component.xml");
    String xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        + "<scr:component xmlns:scr=\"http://www.osgi.org/xmlns/scr/v1.3.0\" name=\"" + artifact + "\""
        + " configuration-policy=\"require\" configuration-pid=\"" + pid + "\" immediate=\"true\""
        + " activate=\"activate\" modified=\"modified\">\n"
        + "  <implementation class=\"" + component.getName() + "\"/>\n"
        + "  <service><provide interface=\"java.util.function.Supplier\"/></service>\n"
        + "</scr:component>\n";
    try (OutputStream out = Files.newOutputStream(file); JarOutputStream jar = new JarOutputStream(out, manifest)) {
      jar.putNextEntry(new JarEntry("OSGI-INF/component.xml"));
      jar.write(xml.getBytes(java.nio.charset.StandardCharsets.UTF_8));
      jar.closeEntry();
      String name = component.getName().replace('.', '/') + ".class";
      jar.putNextEntry(new JarEntry(name));
      try (InputStream in = component.getClassLoader().getResourceAsStream(name)) {
        in.transferTo(jar);
      }
      jar.closeEntry();
    }
    return file;
  }

  /**
   * A component that keeps the configuration it was activated or last modified with: {@code get()} returns it,
   * with {@code test.modified}, how often {@code modified} was called. Only java.* types: no imports needed.
   */
  public static final class ConfiguredComponent implements java.util.function.Supplier<java.util.Map<String, Object>> {
    private volatile java.util.Map<String, Object> last = java.util.Map.of();
    private final java.util.concurrent.atomic.AtomicInteger modified = new java.util.concurrent.atomic.AtomicInteger();

    public void activate(java.util.Map<String, Object> properties) {
      last = new java.util.HashMap<>(properties);
    }

    public void modified(java.util.Map<String, Object> properties) {
      last = new java.util.HashMap<>(properties);
      modified.incrementAndGet();
    }

    @Override
    public java.util.Map<String, Object> get() {
      java.util.Map<String, Object> copy = new java.util.HashMap<>(last);
      copy.put("test.modified", modified.get());
      return copy;
    }
  }

  /** A jar without a bundle manifest. */
  static Path writePlainJar(Path repository, String group, String artifact, String version) throws IOException {
    Path file = repository.resolve(group.replace('.', '/') + "/" + artifact + "/" + version + "/" + artifact + "-"
        + version + ".jar");
    Files.createDirectories(file.getParent());
    Manifest manifest = new Manifest();
    manifest.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
    try (OutputStream out = Files.newOutputStream(file); JarOutputStream jar = new JarOutputStream(out, manifest)) {
      jar.putNextEntry(new JarEntry("readme.txt"));
      jar.write("not a bundle".getBytes());
      jar.closeEntry();
    }
    return file;
  }

  static String sha256(Path file) throws Exception {
    return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file)));
  }

  /** An activator that fails. */
  public static final class ThrowingActivator implements BundleActivator {
    @Override
    public void start(org.osgi.framework.BundleContext context) {
      throw new IllegalStateException("activator refuses to start");
    }

    @Override
    public void stop(org.osgi.framework.BundleContext context) {
    }
  }
}
