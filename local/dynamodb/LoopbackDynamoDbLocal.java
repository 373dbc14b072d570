import java.lang.reflect.Field;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.ServerConnector;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

/**
 * DynamoDB Local bound to the loopback interface only. DynamoDB Local has no bind option: its
 * DynamoDBProxyServer builds a Jetty Server(port), whose connector listens on every interface, and
 * the emulator has no authentication, so any host that reaches the machine could read and write
 * the table. This launcher builds the same server from the same command line (ServerRunner), sets
 * the connector's host to 127.0.0.1 before it starts, then starts it.
 * Run in Java's single-source-file mode: `java -cp DynamoDBLocal.jar LoopbackDynamoDbLocal.java <DynamoDB Local options>`.
 */
public class LoopbackDynamoDbLocal {
  public static void main(String[] args) throws Exception {
    DynamoDBProxyServer server = ServerRunner.createServerFromCommandLineArgs(args);
    Field jettyField = DynamoDBProxyServer.class.getDeclaredField("server");
    jettyField.setAccessible(true);
    org.eclipse.jetty.server.Server jetty = (org.eclipse.jetty.server.Server) jettyField.get(server);
    for (Connector connector : jetty.getConnectors()) {
      if (!(connector instanceof ServerConnector)) throw new IllegalStateException("unexpected Jetty connector " + connector.getClass());
      ((ServerConnector) connector).setHost("127.0.0.1");
    }
    server.start();
  }
}
