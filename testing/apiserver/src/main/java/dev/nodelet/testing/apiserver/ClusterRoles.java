package dev.nodelet.testing.apiserver;

import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** The rules of a ClusterRole in a YAML manifest, for {@link EmbeddedApiServer.Builder#authorize}. */
public final class ClusterRoles {

  private ClusterRoles() {
  }

  /**
   * The rules of the ClusterRole {@code name} in a YAML file of one or more documents (other kinds are skipped).
   *
   * @throws IllegalArgumentException if the file has no ClusterRole of that name
   */
  public static List<PolicyRule> rules(Path yaml, String name) {
    try (InputStream in = Files.newInputStream(yaml)) {
      return rules(in, name);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + yaml, e);
    }
  }

  /** The same for a stream, which the caller closes. */
  public static List<PolicyRule> rules(InputStream yaml, String name) {
    Object parsed = Serialization.unmarshal(yaml);
    List<?> documents = parsed instanceof List<?> list ? list : List.of(parsed);
    return documents.stream()
        .filter(d -> d instanceof ClusterRole role && name.equals(role.getMetadata().getName()))
        .map(d -> List.copyOf(((ClusterRole) d).getRules()))
        .findFirst()
        .orElseThrow(() -> new IllegalArgumentException("no ClusterRole " + name + " in the YAML"));
  }
}
