package dev.nodelet.pods.internal;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link PodApi} on the node's Kubernetes client. The status goes as a JSON merge patch of {@code pods/status} that
 * carries {@code metadata.uid}: the API server refuses it (409) when the pod under that name has another UID, as
 * it does for the kubelet's status patches. The delete carries DeleteOptions with a UID precondition. The Node comes
 * from an informer on it (started by the first read), as the kubelet's admission reads it from its node lister: a
 * GET only while the informer has not got it.
 */
final class KubePodApi implements PodApi {

  private static final Logger LOG = LoggerFactory.getLogger(KubePodApi.class);

  private final KubernetesClient client;
  private SharedIndexInformer<Node> nodes; // guarded by this; null until the first read
  private boolean closed; // guarded by this

  KubePodApi(KubernetesClient client) {
    this.client = client;
  }

  @Override
  public Outcome writeStatus(Pod pod, PodStatus status) {
    ObjectNode patch = Serialization.jsonMapper().createObjectNode();
    patch.putObject("metadata").put("uid", pod.getMetadata().getUid());
    ObjectNode body = Serialization.jsonMapper().valueToTree(status);
    // a merge patch keeps fields it does not name: name the ones Nodelet clears
    for (String cleared : new String[] {"reason", "message"}) {
      if (!body.hasNonNull(cleared)) {
        body.putNull(cleared);
      }
    }
    patch.set("status", body);
    // sent as is: fabric8's patch of a subresource reads the pod first, which needs a get on pods the node's roles
    // do not grant
    HttpRequest request = client.getHttpClient().newHttpRequestBuilder().uri(url(pod) + "/status")
        .patch("application/merge-patch+json", patch.toString()).build();
    return send(request, "status of pod", pod);
  }

  @Override
  public Outcome delete(Pod pod) {
    ObjectNode options = Serialization.jsonMapper().createObjectNode();
    options.put("kind", "DeleteOptions").put("apiVersion", "v1").put("gracePeriodSeconds", 0);
    options.putObject("preconditions").put("uid", pod.getMetadata().getUid());
    HttpRequest request = client.getHttpClient().newHttpRequestBuilder().uri(url(pod))
        .delete("application/json", options.toString()).build();
    return send(request, "pod", pod);
  }

  private String url(Pod pod) {
    return client.getMasterUrl().toString().replaceAll("/$", "") + "/api/v1/namespaces/"
        + URLEncoder.encode(pod.getMetadata().getNamespace(), StandardCharsets.UTF_8) + "/pods/"
        + URLEncoder.encode(pod.getMetadata().getName(), StandardCharsets.UTF_8);
  }

  private Outcome send(HttpRequest request, String what, Pod pod) {
    try {
      HttpResponse<String> response = client.getHttpClient().sendAsync(request, String.class)
          .get(30, TimeUnit.SECONDS);
      if (response.isSuccessful()) {
        return Outcome.DONE;
      }
      return outcome(what, pod, response.code(), response.body());
    } catch (ExecutionException | TimeoutException e) {
      LOG.warn("Writing the {} {}/{} failed, retrying: {}", what, pod.getMetadata().getNamespace(),
          pod.getMetadata().getName(), e.toString());
      return Outcome.RETRY;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Outcome.RETRY;
    }
  }

  @Override
  public Node node(String name) {
    SharedIndexInformer<Node> informer = informer(name);
    if (informer != null && informer.hasSynced()) {
      Node cached = informer.getStore().getByKey(name);
      if (cached != null) {
        return cached;
      }
    }
    try {
      return client.nodes().withName(name).get();
    } catch (KubernetesClientException e) {
      LOG.debug("Reading node {} failed: {}", name, e.getMessage());
      return null;
    }
  }

  private synchronized SharedIndexInformer<Node> informer(String name) {
    if (nodes == null && !closed) {
      try {
        nodes = client.nodes().withName(name).runnableInformer(0);
        nodes.start(); // not waited for: reads GET the Node until it has it
      } catch (KubernetesClientException | IllegalStateException e) {
        LOG.debug("Following node {} failed, reading it each time: {}", name, e.getMessage());
      }
    }
    return nodes;
  }

  /** Stops following the Node. */
  @Override
  public synchronized void close() {
    closed = true;
    if (nodes != null) {
      nodes.close();
    }
  }

  private static Outcome outcome(String what, Pod pod, int code, String message) {
    String key = pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName();
    if (code == 404 || code == 409) {
      // 409 on a UID precondition: the name holds another pod now, which is not this one
      LOG.info("Writing the {} {} (uid {}) answered {}: the pod is gone or replaced", what, key,
          pod.getMetadata().getUid(), code);
      return Outcome.GONE;
    }
    LOG.warn("Writing the {} {} failed ({}), retrying: {}", what, key, code, message);
    return Outcome.RETRY;
  }
}
