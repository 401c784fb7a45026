package dev.nodelet.launcher;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.jar.JarFile;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.BundleEvent;
import org.osgi.framework.BundleException;
import org.osgi.framework.BundleListener;
import org.osgi.framework.Constants;

/**
 * The launcher's own bundles (those of {@code bundles/}) against hot deploy. FileInstall updates an installed bundle
 * with a jar of {@code deploy/} of the same symbolic name and version instead of installing a second one, and
 * uninstalls it when the jar goes: a copy of a built-in bundle in {@code deploy/} replaces the built-in one, and its
 * removal would leave none. This says the first, and installs the built-in bundle again after the second.
 */
final class BuiltInBundles implements BundleListener {

  private static final String REFERENCE = "reference:";

  private final Set<String> locations;
  private final Path deployDir;
  private final Supplier<BundleContext> context;
  private final PrintStream out;
  /** Whether the launcher starts a bundle (it leaves the Gogo shell's alone without a console). */
  private final Predicate<Bundle> started;
  /** Built-in bundles that a jar of deploy/ replaced, by location. */
  private final Set<String> replaced = ConcurrentHashMap.newKeySet();

  BuiltInBundles(List<Path> jars, Path deployDir, Supplier<BundleContext> context, PrintStream out,
      Predicate<Bundle> started) {
    this.locations = jars.stream().map(BuiltInBundles::location).collect(Collectors.toSet());
    this.deployDir = deployDir;
    this.context = context;
    this.out = out;
    this.started = started;
  }

  /**
   * Where a built-in bundle is installed from: read in place ({@code reference:}), not copied into the framework's
   * cache at every start (43 MB of jars, written again at every start of a fresh work folder).
   */
  static String location(Path jar) {
    return REFERENCE + jar.toUri();
  }

  /** The jar of a {@link #location(Path)}. */
  static Path jar(String location) {
    return Path.of(java.net.URI.create(location.substring(REFERENCE.length())));
  }

  @Override
  public void bundleChanged(BundleEvent event) {
    Bundle bundle = event.getBundle();
    String location = bundle.getLocation();
    if (!locations.contains(location)) {
      return;
    }
    if (event.getType() == BundleEvent.UPDATED) {
      Optional<Path> jar = deployed(bundle.getSymbolicName());
      if (jar.isPresent()) {
        replaced.add(location);
        out.println("nodelet: WARN " + jar.get() + " replaces the built-in bundle " + bundle.getSymbolicName() + " "
            + bundle.getVersion() + " (" + jar(location).getFileName() + "); removing it"
            + " from " + deployDir.toAbsolutePath() + " brings the built-in one back");
      }
    } else if (event.getType() == BundleEvent.UNINSTALLED && replaced.remove(location)) {
      restore(location, bundle.getSymbolicName());
    }
  }

  private void restore(String location, String name) {
    BundleContext system = context.get();
    if (system == null) {
      return; // the framework stops
    }
    try {
      Bundle bundle = system.installBundle(location);
      if (bundle.getHeaders().get(Constants.FRAGMENT_HOST) == null && started.test(bundle)) {
        bundle.start();
      }
      // bundles that lost their wiring with the deployed copy (they import from it) start again with the built-in
      for (Bundle other : system.getBundles()) {
        if (other.getState() == Bundle.INSTALLED && locations.contains(other.getLocation())
            && other.getHeaders().get(Constants.FRAGMENT_HOST) == null && started.test(other)) {
          other.start();
        }
      }
      out.println("nodelet: the built-in bundle " + name + " is back (its copy left " + deployDir.toAbsolutePath()
          + ")");
    } catch (BundleException | IllegalStateException e) {
      out.println("nodelet: cannot bring the built-in bundle " + name + " back from " + location + ": "
          + e.getMessage() + "; restart Nodelet to get it");
    }
  }

  /** The jar of deploy/ with this symbolic name, if any. */
  private Optional<Path> deployed(String symbolicName) {
    try (Stream<Path> files = Files.list(deployDir)) {
      return files.filter(p -> p.toString().endsWith(".jar")).filter(p -> symbolicName.equals(symbolicName(p)))
          .findFirst();
    } catch (IOException e) {
      return Optional.empty();
    }
  }

  private static String symbolicName(Path jar) {
    try (JarFile file = new JarFile(jar.toFile())) {
      String name = file.getManifest() == null ? null
          : file.getManifest().getMainAttributes().getValue(Constants.BUNDLE_SYMBOLICNAME);
      return name == null ? null : name.split(";")[0].trim();
    } catch (IOException e) {
      return null;
    }
  }
}
