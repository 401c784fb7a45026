package dev.nodelet.pods.internal;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * What a container's {@code image} names: a Maven artifact {@code mvn:group/artifact/version[/type[/classifier]]},
 * a {@code file:} URL or an {@code https:} URL of a bundle, each with an optional {@code @sha256:<hex>} digest that
 * the content must match; or a Karaf feature {@code feature:name[/version]} ({@link FeatureImages}).
 *
 * @param kind how the bundle is fetched
 * @param groupId the Maven group (MAVEN only)
 * @param artifactId the Maven artifact (MAVEN only)
 * @param version the Maven version (MAVEN only)
 * @param type the Maven type, {@code jar} unless given (MAVEN only)
 * @param classifier the Maven classifier, empty unless given (MAVEN only)
 * @param url the URL (FILE and HTTPS only)
 * @param digest the expected SHA-256 in lower-case hex; {@code null} when the image has none
 */
record ImageRef(Kind kind, String groupId, String artifactId, String version, String type, String classifier,
    URI url, String digest) {

  /** How a bundle is fetched. */
  enum Kind { MAVEN, FILE, HTTPS, FEATURE }

  private static final Pattern HEX = Pattern.compile("[0-9a-f]{64}");
  private static final Pattern COORDINATE = Pattern.compile("[A-Za-z0-9_.-]+");

  /**
   * @param image a container's {@code image}
   * @return what it names
   * @throws IllegalArgumentException naming what is wrong and the forms accepted
   */
  static ImageRef parse(String image) {
    if (image == null || image.isBlank()) {
      throw new IllegalArgumentException("the image is empty; " + FORMS);
    }
    String name = image.trim();
    String digest = null;
    int at = name.lastIndexOf("@sha256:");
    if (at >= 0) {
      digest = name.substring(at + "@sha256:".length()).toLowerCase(Locale.ROOT);
      name = name.substring(0, at);
      if (!HEX.matcher(digest).matches()) {
        throw new IllegalArgumentException("image " + image + ": the digest must be sha256: and 64 hex digits");
      }
    }
    if (name.startsWith(FeatureImages.SCHEME)) {
      return FeatureImages.parse(image, name, digest);
    }
    if (name.startsWith("mvn:")) {
      String[] parts = name.substring(4).split("/", -1);
      if (parts.length < 3 || parts.length > 5) {
        throw new IllegalArgumentException("image " + image + ": a Maven image is mvn:group/artifact/version"
            + "[/type[/classifier]]");
      }
      for (String part : parts) {
        if (!COORDINATE.matcher(part).matches() || part.equals(".") || part.equals("..")) {
          throw new IllegalArgumentException("image " + image + ": \"" + part + "\" is not a valid Maven "
              + "coordinate (letters, digits, '.', '_', '-')");
        }
      }
      return new ImageRef(Kind.MAVEN, parts[0], parts[1], parts[2], parts.length > 3 ? parts[3] : "jar",
          parts.length > 4 ? parts[4] : "", null, digest);
    }
    if (name.startsWith("file:") || name.startsWith("https:")) {
      URI uri;
      try {
        uri = new URI(name);
      } catch (URISyntaxException e) {
        throw new IllegalArgumentException("image " + image + ": not a valid URL: " + e.getMessage());
      }
      return new ImageRef(name.startsWith("file:") ? Kind.FILE : Kind.HTTPS, null, null, null, null, null, uri,
          digest);
    }
    throw new IllegalArgumentException("image " + image + ": " + FORMS);
  }

  private static final String FORMS = "an image names a bundle as mvn:group/artifact/version, a file: URL or an "
      + "https: URL, optionally followed by @sha256:<64 hex digits>, or a Karaf feature as feature:name[/version]";

  /** @return the image without its digest, as messages name it */
  String artifact() {
    if (kind == Kind.FEATURE) {
      return FeatureImages.SCHEME + artifactId + (version.isEmpty() ? "" : "/" + version);
    }
    return kind == Kind.MAVEN
        ? "mvn:" + groupId + "/" + artifactId + "/" + version
            + (type.equals("jar") && classifier.isEmpty() ? "" : "/" + type)
            + (classifier.isEmpty() ? "" : "/" + classifier)
        : url.toString();
  }

  /** @return the path of the artifact in a Maven repository layout */
  String repositoryPath() {
    return groupId.replace('.', '/') + "/" + artifactId + "/" + version + "/" + artifactId + "-" + version
        + (classifier.isEmpty() ? "" : "-" + classifier) + "." + type;
  }
}
