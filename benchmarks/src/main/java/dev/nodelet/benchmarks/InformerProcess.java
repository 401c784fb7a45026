package dev.nodelet.benchmarks;

import dev.nodelet.kube.KubeClients;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The baseline process of measure 13: the same job as a node-only Nodelet done with fabric8 informers, on the client
 * Nodelet runs with ({@code KubeClients}, HTTP/2). One informer on the node's pods ({@code spec.nodeName}) and one
 * informer per ConfigMap those pods reference, as measure 2's baseline (with 2-minute request timeouts). Prints
 * {@value #READY} once the pods are listed and every referenced ConfigMap's informer has synced, then runs until its
 * standard input closes.
 *
 * <pre>java -cp benchmarks.jar dev.nodelet.benchmarks.InformerProcess KUBECONFIG NODE</pre>
 */
public final class InformerProcess {

  static final String READY = "Baseline ready";

  private final KubernetesClient client;
  private final Map<String, SharedIndexInformer<ConfigMap>> informers = new HashMap<>(); // guarded by this
  private final List<CompletableFuture<Void>> starts = new ArrayList<>(); // guarded by this

  private InformerProcess(KubernetesClient client) {
    this.client = client;
  }

  public static void main(String[] args) throws IOException {
    if (args.length != 2) {
      System.err.println("usage: InformerProcess KUBECONFIG NODE");
      System.exit(2);
    }
    // long timeouts: with the defaults' 10 s, the informers' lists time out behind a thousand watch openings on a
    // loaded machine and the informers stop
    try (KubernetesClient client = KubeClients.builder().kubeconfig(args[0]).http2(true)
        .requestTimeout(Duration.ofMinutes(2)).connectionTimeout(Duration.ofMinutes(1)).build()) {
      InformerProcess process = new InformerProcess(client);
      SharedIndexInformer<Pod> pods = client.pods().inAnyNamespace().withField("spec.nodeName", args[1])
          .inform(process.podHandler(), 0);
      pods.start().toCompletableFuture().join();
      // the handler may not have seen every listed pod yet: start what it has not (each informer once)
      pods.getStore().list().forEach(process::watchReferences);
      CompletableFuture.allOf(process.starts().toArray(CompletableFuture[]::new)).orTimeout(10, TimeUnit.MINUTES)
          .join();
      System.out.println(READY + ": " + pods.getStore().list().size() + " pods, " + process.size()
          + " ConfigMap informers");
      System.out.flush();
      InputStream in = System.in;
      while (in.read() >= 0) {
        // runs until the parent closes our input
      }
      pods.close();
      process.close();
    }
  }

  private ResourceEventHandler<Pod> podHandler() {
    return new ResourceEventHandler<>() {
      @Override
      public void onAdd(Pod pod) {
        watchReferences(pod);
      }

      @Override
      public void onUpdate(Pod old, Pod pod) {
        watchReferences(pod);
      }

      @Override
      public void onDelete(Pod pod, boolean unknownFinalState) {
        // a kubelet would stop watching what no pod references any more; the measure deletes no pods
      }
    };
  }

  /** Starts an informer for each ConfigMap the pod references that has none yet. */
  private synchronized void watchReferences(Pod pod) {
    String namespace = pod.getMetadata().getNamespace();
    for (Volume volume : pod.getSpec().getVolumes()) {
      if (volume.getConfigMap() == null) {
        continue;
      }
      String name = volume.getConfigMap().getName();
      String key = namespace + "/" + name;
      if (!informers.containsKey(key)) {
        SharedIndexInformer<ConfigMap> informer = client.configMaps().inNamespace(namespace).withName(name)
            .runnableInformer(0);
        informers.put(key, informer);
        starts.add(informer.start().toCompletableFuture());
      }
    }
  }

  private synchronized List<CompletableFuture<Void>> starts() {
    return new ArrayList<>(starts);
  }

  private synchronized int size() {
    return informers.size();
  }

  private synchronized void close() {
    informers.values().forEach(SharedIndexInformer::close);
  }
}
