package dev.nodelet.pods.internal;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.HttpURLConnection;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.jar.JarInputStream;
import java.util.jar.Manifest;

/**
 * Fetches the bundle an image names: a Maven artifact from the local repository folder, else from the remote
 * repositories (https only) in order; a {@code file:} URL; an {@code https:} URL. Checks that the image is allowed
 * (its group for Maven images, its URL prefix otherwise), that its content matches the image's digest if it has
 * one, and that it is an OSGi bundle, before anything is installed. Blocks on I/O: called on the pods' executor.
 */
final class ImageSource {

  /**
   * The fetched bundle.
   *
   * @param file where its content is
   * @param imageId {@code sha256:<hex>} of the content
   * @param symbolicName its {@code Bundle-SymbolicName}
   */
  record Fetched(Path file, String imageId, String symbolicName) {
  }

  private final Path localRepository; // null: none
  private final List<URI> remoteRepositories;
  private final List<String> allowedGroups; // empty: all
  private final List<String> allowedUrls; // empty: all
  private final Path downloads;
  private final FeatureImages features;

  ImageSource(Path localRepository, List<URI> remoteRepositories, List<String> allowedGroups,
      List<String> allowedUrls, Path downloads) {
    this(localRepository, remoteRepositories, allowedGroups, allowedUrls, downloads,
        new FeatureImages(() -> null, downloads));
  }

  ImageSource(Path localRepository, List<URI> remoteRepositories, List<String> allowedGroups,
      List<String> allowedUrls, Path downloads, FeatureImages features) {
    this.features = features;
    this.localRepository = localRepository;
    this.remoteRepositories = List.copyOf(remoteRepositories);
    this.allowedGroups = List.copyOf(allowedGroups);
    this.allowedUrls = List.copyOf(allowedUrls);
    this.downloads = downloads;
  }

  /**
   * @param image the image
   * @return the bundle it names, checked
   * @throws ImagePullException naming the image and why it cannot be had
   */
  Fetched fetch(ImageRef image) throws ImagePullException {
    return fetch(image, null);
  }

  /**
   * @param image the image
   * @param location the container's location, for which a feature image is installed
   * @return the bundle it names, checked
   * @throws ImagePullException naming the image and why it cannot be had
   */
  Fetched fetch(ImageRef image, String location) throws ImagePullException {
    checkAllowed(image);
    Path file = switch (image.kind()) {
      case MAVEN -> maven(image);
      case FILE -> file(image);
      case HTTPS -> download(image.url(), image);
      case FEATURE -> features.install(image, location);
    };
    String sha;
    String symbolicName;
    try (InputStream in = Files.newInputStream(file)) {
      MessageDigest digest = MessageDigest.getInstance("SHA-256");
      DigestInputStream counted = new DigestInputStream(in, digest);
      symbolicName = symbolicName(counted);
      counted.transferTo(OutputStreamSink.INSTANCE);
      sha = HexFormat.of().formatHex(digest.digest());
    } catch (IOException e) {
      throw new ImagePullException("image " + image.artifact() + " cannot be read: " + e.getMessage());
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this Java runtime", e);
    }
    if (image.digest() != null && !image.digest().equals(sha)) {
      throw new ImagePullException("image " + image.artifact() + " does not match its digest: expected sha256:"
          + image.digest() + ", got sha256:" + sha);
    }
    if (symbolicName == null) {
      throw new ImagePullException("image " + image.artifact() + " is not an OSGi bundle (its manifest has no "
          + "Bundle-SymbolicName)");
    }
    return new Fetched(file, "sha256:" + sha, symbolicName);
  }

  /** The container at the location went: a feature its image installed is uninstalled with its last container. */
  void released(String image, String location) {
    features.released(image, location);
  }

  private void checkAllowed(ImageRef image) throws ImagePullException {
    if (image.kind() == ImageRef.Kind.FEATURE) {
      // neither list can say what a feature installs: a node that restricts what pods install runs no feature
      if (!allowedGroups.isEmpty() || !allowedUrls.isEmpty()) {
        throw new ImagePullException("image " + image.artifact() + " is not allowed: allowed.groups or allowed.urls "
            + "of " + dev.nodelet.pods.PodBundles.PID + " restrict what pods install, and a Karaf feature is "
            + "covered by neither; name a bundle, or leave both empty to allow features");
      }
      return; // Karaf's own repositories and rules decide what a feature installs
    }
    if (image.kind() == ImageRef.Kind.MAVEN) {
      if (!allowedGroups.isEmpty() && allowedGroups.stream().noneMatch(g -> g.equals(image.groupId())
          || (g.endsWith(".*") && image.groupId().startsWith(g.substring(0, g.length() - 1))))) {
        throw new ImagePullException("image " + image.artifact() + " is not allowed: group " + image.groupId()
            + " is not in allowed.groups of " + dev.nodelet.pods.PodBundles.PID);
      }
    } else if (!allowedUrls.isEmpty() && allowedUrls.stream().noneMatch(p -> image.url().toString().startsWith(p))) {
      throw new ImagePullException("image " + image.artifact() + " is not allowed: it starts with none of "
          + "allowed.urls of " + dev.nodelet.pods.PodBundles.PID);
    }
  }

  private Path maven(ImageRef image) throws ImagePullException {
    if (localRepository != null) {
      Path local = localRepository.resolve(image.repositoryPath());
      if (Files.isRegularFile(local)) {
        return local;
      }
    }
    for (URI repository : remoteRepositories) {
      String base = repository.toString().endsWith("/") ? repository.toString() : repository + "/";
      Path fetched = downloadIfFound(URI.create(base + image.repositoryPath()), image);
      if (fetched != null) {
        return fetched;
      }
    }
    throw new ImagePullException("image " + image.artifact() + " not found in "
        + (localRepository == null ? "" : "the local repository " + localRepository)
        + (remoteRepositories.isEmpty() ? "" : (localRepository == null ? "" : " or ") + "the remote repositories "
            + remoteRepositories));
  }

  private static Path file(ImageRef image) throws ImagePullException {
    Path path;
    try {
      path = Path.of(image.url());
    } catch (IllegalArgumentException e) {
      throw new ImagePullException("image " + image.artifact() + " is not a valid file URL: " + e.getMessage());
    }
    if (!Files.isRegularFile(path)) {
      throw new ImagePullException("image " + image.artifact() + " not found: no file " + path);
    }
    return path;
  }

  private Path download(URI url, ImageRef image) throws ImagePullException {
    Path fetched = downloadIfFound(url, image);
    if (fetched == null) {
      throw new ImagePullException("image " + image.artifact() + " not found: " + url + " answered 404");
    }
    return fetched;
  }

  /**
   * @return the downloaded file, or null on 404. {@link HttpURLConnection} rather than {@code HttpClient}: it keeps
   *     no thread once the download is done, so a stopped bundle leaves none behind
   */
  private Path downloadIfFound(URI url, ImageRef image) throws ImagePullException {
    if (!"https".equals(url.getScheme())) {
      throw new ImagePullException("image " + image.artifact() + ": only https downloads are allowed, not " + url);
    }
    HttpURLConnection connection = null;
    try {
      Files.createDirectories(downloads);
      connection = (HttpURLConnection) url.toURL().openConnection();
      connection.setConnectTimeout((int) Duration.ofSeconds(10).toMillis());
      connection.setReadTimeout((int) Duration.ofSeconds(60).toMillis());
      connection.setInstanceFollowRedirects(true);
      int code = connection.getResponseCode();
      if (code == 404) {
        return null;
      }
      if (code != 200) {
        throw new ImagePullException("image " + image.artifact() + ": " + url + " answered " + code);
      }
      Path target = Files.createTempFile(downloads, "image-", ".jar");
      try (InputStream in = connection.getInputStream()) {
        Files.copy(in, target, StandardCopyOption.REPLACE_EXISTING);
      }
      Path named = downloads.resolve(image.artifact().replaceAll("[^A-Za-z0-9_.-]", "_") + ".jar");
      Files.move(target, named, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
      return named;
    } catch (NoSuchFileException e) {
      throw new ImagePullException("image " + image.artifact() + ": cannot write to " + e.getFile());
    } catch (IOException e) {
      throw new ImagePullException("image " + image.artifact() + " cannot be downloaded from " + url + ": " + e);
    } finally {
      if (connection != null) {
        connection.disconnect();
      }
    }
  }

  private static String symbolicName(InputStream in) throws IOException {
    JarInputStream jar = new JarInputStream(in, false);
    Manifest manifest = jar.getManifest();
    String name = manifest == null ? null : manifest.getMainAttributes().getValue("Bundle-SymbolicName");
    // read the rest so that the digest covers the whole content
    while (jar.getNextJarEntry() != null) {
      jar.transferTo(OutputStreamSink.INSTANCE);
    }
    return name == null ? null : name.split(";")[0].trim();
  }

  /** Discards what is written to it. */
  private static final class OutputStreamSink extends java.io.OutputStream {
    static final OutputStreamSink INSTANCE = new OutputStreamSink();

    @Override
    public void write(int b) {
    }

    @Override
    public void write(byte[] b, int off, int len) {
    }
  }
}
