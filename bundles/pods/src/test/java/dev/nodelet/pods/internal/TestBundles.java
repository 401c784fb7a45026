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
