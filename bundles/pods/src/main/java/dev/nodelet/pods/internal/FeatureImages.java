package dev.nodelet.pods.internal;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import java.util.jar.Attributes;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Images that name a Karaf feature, {@code feature:name[/version]}: installed through Karaf's FeaturesService (the
 * version given, else the newest the features repositories know), without a refresh of bundles already there. The
 * container's own bundle is a small marker bundle ({@code nodelet-feature.<name>}, a manifest only) at the
 * container's location, so that its lifecycle, status and configuration are those of any container; the feature's
 * bundles are Karaf's. The feature is uninstalled when the last container that installed it goes. Without Karaf
 * (no FeaturesService, or not its package) such an image cannot be pulled, and says so.
 */
final class FeatureImages {

  static final String SCHEME = "feature:";

  private static final Logger LOG = LoggerFactory.getLogger(FeatureImages.class);
  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_.-]+");

  private final Supplier<Object> featuresService; // Karaf's FeaturesService, or null
  private final Path markers;
  private final Map<String, Set<String>> users = new HashMap<>(); // feature image -> container locations

  /**
   * @param featuresService Karaf's FeaturesService as an Object (no Karaf type in this class), or null without one
   * @param markers the folder of the marker bundles
   */
  FeatureImages(Supplier<Object> featuresService, Path markers) {
    this.featuresService = featuresService;
    this.markers = markers;
  }

  static ImageRef parse(String image, String name, String digest) {
    if (digest != null) {
      throw new IllegalArgumentException("image " + image + ": a feature image has no digest; write "
          + "feature:name[/version]");
    }
    String[] parts = name.substring(SCHEME.length()).split("/", -1);
    if (parts.length > 2 || parts[0].isEmpty() || !NAME.matcher(parts[0]).matches()
        || (parts.length == 2 && !NAME.matcher(parts[1]).matches())) {
      throw new IllegalArgumentException("image " + image + ": a feature image is feature:name[/version] (letters, "
          + "digits, '.', '_', '-')");
    }
    return new ImageRef(ImageRef.Kind.FEATURE, null, parts[0], parts.length == 2 ? parts[1] : "", "jar", "", null,
        null);
  }

  /**
   * Installs the feature for the container at the location.
   *
   * @return the marker bundle to install at the container's location
   * @throws ImagePullException without Karaf, or when Karaf cannot install the feature
   */
  Path install(ImageRef image, String location) throws ImagePullException {
    Object service = featuresService.get();
    if (service == null) {
      throw new ImagePullException("image " + image.artifact() + " names a Karaf feature: features need Apache "
          + "Karaf's FeaturesService, which this framework does not have; name a bundle (mvn:, file: or https:)");
    }
    try {
      Karaf.install(service, image.artifactId(), image.version());
    } catch (Exception e) {
      throw new ImagePullException("image " + image.artifact() + ": Karaf cannot install the feature: "
          + (e.getMessage() == null ? e.toString() : e.getMessage()));
    }
    synchronized (users) {
      users.computeIfAbsent(image.artifact(), k -> new HashSet<>()).add(location);
    }
    LOG.info("Container {} installed the Karaf feature {}", location, image.artifact());
    return marker(image);
  }

  /** The container at the location went: its feature is uninstalled if no other container uses it. */
  void released(String image, String location) {
    ImageRef ref;
    try {
      ref = ImageRef.parse(image);
    } catch (IllegalArgumentException e) {
      return;
    }
    if (ref.kind() != ImageRef.Kind.FEATURE) {
      return;
    }
    synchronized (users) {
      Set<String> locations = users.getOrDefault(ref.artifact(), new HashSet<>());
      locations.remove(location);
      if (!locations.isEmpty()) {
        return;
      }
      users.remove(ref.artifact());
    }
    Object service = featuresService.get();
    if (service == null) {
      LOG.warn("Container {} went, but its Karaf feature {} stays: Karaf's FeaturesService is gone", location,
          ref.artifact());
      return;
    }
    try {
      Karaf.uninstall(service, ref.artifactId(), ref.version());
      LOG.info("Container {} went: the Karaf feature {} is uninstalled", location, ref.artifact());
    } catch (Exception e) {
      LOG.warn("Container {} went, but its Karaf feature {} cannot be uninstalled: {}", location, ref.artifact(),
          e.toString());
    }
  }

  private Path marker(ImageRef image) throws ImagePullException {
    Manifest manifest = new Manifest();
    Attributes main = manifest.getMainAttributes();
    main.put(Attributes.Name.MANIFEST_VERSION, "1.0");
    main.putValue("Bundle-ManifestVersion", "2");
    main.putValue("Bundle-SymbolicName", "nodelet-feature." + image.artifactId());
    main.putValue("Bundle-Version", "0.0.0");
    main.putValue("Bundle-Name", "Nodelet container of the Karaf feature " + image.artifact());
    Path marker = markers.resolve(image.artifact().replaceAll("[^A-Za-z0-9_.-]", "_") + ".jar");
    try {
      Files.createDirectories(markers);
      Path temporary = Files.createTempFile(markers, "feature-", ".jar");
      try (OutputStream out = Files.newOutputStream(temporary); JarOutputStream unused = new JarOutputStream(out,
          manifest)) {
        // a manifest only
      }
      Files.move(temporary, marker, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
      return marker;
    } catch (IOException e) {
      throw new ImagePullException("image " + image.artifact() + ": cannot write its marker bundle " + marker
          + ": " + e);
    }
  }

  /** The calls that name Karaf's types: loaded only where Karaf's FeaturesService is. */
  private static final class Karaf {
    private static final EnumSet<org.apache.karaf.features.FeaturesService.Option> NO_REFRESH =
        EnumSet.of(org.apache.karaf.features.FeaturesService.Option.NoAutoRefreshBundles);

    static void install(Object service, String name, String version) throws Exception {
      org.apache.karaf.features.FeaturesService features = (org.apache.karaf.features.FeaturesService) service;
      if (version.isEmpty()) {
        features.installFeature(name, NO_REFRESH);
      } else {
        features.installFeature(name, version, NO_REFRESH);
      }
    }

    static void uninstall(Object service, String name, String version) throws Exception {
      org.apache.karaf.features.FeaturesService features = (org.apache.karaf.features.FeaturesService) service;
      if (version.isEmpty()) {
        features.uninstallFeature(name, NO_REFRESH);
      } else {
        features.uninstallFeature(name, version, NO_REFRESH);
      }
    }
  }
}
