package dev.nodelet.kube.internal.watch;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespaced;
import java.net.URL;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/** The collection URL of one resource type (and namespace) and its list/watch queries. */
final class ResourcePath {

  private final String collection;
  private final String description;

  ResourcePath(URL masterUrl, Class<? extends HasMetadata> type, String namespace) {
    String group = HasMetadata.getGroup(type);
    String version = HasMetadata.getVersion(type);
    String plural = HasMetadata.getPlural(type);
    if (version == null || plural == null) {
      throw new IllegalArgumentException(type.getName() + " is not a Kubernetes resource class: it has no @Version "
          + "or plural name");
    }
    boolean namespaced = Namespaced.class.isAssignableFrom(type);
    String base = masterUrl.toString();
    if (base.endsWith("/")) {
      base = base.substring(0, base.length() - 1);
    }
    StringBuilder path = new StringBuilder(base);
    path.append(group == null || group.isEmpty() ? "/api/" + version : "/apis/" + group + "/" + version);
    if (namespaced && namespace != null) {
      path.append("/namespaces/").append(encode(namespace));
    }
    path.append('/').append(plural);
    this.collection = path.toString();
    this.description = plural + (namespaced && namespace != null ? " in namespace " + namespace : "");
  }

  /** @return the URL of a LIST of the collection; a {@code null} selector is left out */
  String listUri(String fieldSelector, String labelSelector) {
    Map<String, String> query = new LinkedHashMap<>();
    query.put("fieldSelector", fieldSelector);
    query.put("labelSelector", labelSelector);
    return uri(query);
  }

  /**
   * @param watchList whether the watch sends the initial state first (WatchList), from a state not older than
   *     {@code resourceVersion} (any state when null); otherwise it starts at {@code resourceVersion}
   * @param timeoutSeconds after which the server ends the watch
   * @return the URL of a WATCH of the collection, with bookmarks; a {@code null} selector is left out
   */
  String watchUri(String fieldSelector, String labelSelector, boolean watchList, String resourceVersion,
      long timeoutSeconds) {
    Map<String, String> query = new LinkedHashMap<>();
    query.put("watch", "true");
    query.put("allowWatchBookmarks", "true");
    query.put("fieldSelector", fieldSelector);
    query.put("labelSelector", labelSelector);
    if (watchList) {
      query.put("sendInitialEvents", "true");
      query.put("resourceVersionMatch", "NotOlderThan");
      query.put("resourceVersion", resourceVersion == null ? "" : resourceVersion);
    } else {
      query.put("resourceVersion", resourceVersion);
    }
    query.put("timeoutSeconds", Long.toString(timeoutSeconds));
    return uri(query);
  }

  /** @return the URL of the collection with these query parameters; {@code null} values are left out */
  private String uri(Map<String, String> query) {
    StringBuilder uri = new StringBuilder(collection);
    char separator = '?';
    for (Map.Entry<String, String> parameter : query.entrySet()) {
      if (parameter.getValue() != null) {
        uri.append(separator).append(parameter.getKey()).append('=').append(encode(parameter.getValue()));
        separator = '&';
      }
    }
    return uri.toString();
  }

  /** @return e.g. "pods in namespace default", for messages */
  String description() {
    return description;
  }

  private static String encode(String value) {
    return URLEncoder.encode(value, StandardCharsets.UTF_8);
  }
}
