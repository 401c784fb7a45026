package dev.nodelet.karaf.shell;

import dev.nodelet.objectcache.ObjectManager;
import dev.nodelet.shell.views.ObjectViews;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import org.apache.karaf.shell.api.action.Argument;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Option;
import org.apache.karaf.shell.api.action.lifecycle.Service;

/** {@code nodelet:get [--show-secret] <configmap|secret> <namespace> <name>}: one object as YAML. */
@Service
@Command(scope = "nodelet", name = "get", description = "Shows one ConfigMap or Secret as YAML, as the manager "
    + "serves it; Secret data is redacted unless --show-secret is given")
public class GetCommand extends ManagersCommand {

  @Option(name = "--show-secret", description = "Show the data of a Secret instead of its keys and sizes")
  boolean showSecret;

  @Argument(index = 0, name = "kind", description = "configmap (cm) or secret", required = true)
  String kind;

  @Argument(index = 1, name = "namespace", description = "The object's namespace", required = true)
  String namespace;

  @Argument(index = 2, name = "name", description = "The object's name", required = true)
  String name;

  @Override
  public Object execute() {
    ObjectManager<?> manager = ObjectViews.manager(managers, kind);
    System.out.print(ObjectViews.yaml(new KubernetesSerialization(), manager.get(namespace, name), showSecret));
    return null;
  }
}
